-- Verify cyclone_router:listings
BEGIN;
SELECT 'cyclone.list_runs(text, text, int, timestamptz)'::regprocedure,
       'cyclone.list_dead_letters(text, text, int)'::regprocedure, 'cyclone.metrics()'::regprocedure;
ROLLBACK;
