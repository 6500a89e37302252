-- Verify cyclone:listings
BEGIN;
SELECT 'cyclone.list_runs(text, text, int, timestamptz)'::regprocedure,
       'cyclone.list_steps(uuid)'::regprocedure,
       'cyclone.list_dead_letters(text, text, int)'::regprocedure;
ROLLBACK;
