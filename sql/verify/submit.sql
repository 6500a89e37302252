-- Verify cyclone:submit
BEGIN;
SELECT 'cyclone.submit(text, jsonb, interval, text, timestamptz)'::regprocedure,
       'cyclone.submit_many(text, jsonb[], interval)'::regprocedure,
       'cyclone.get_run(uuid)'::regprocedure;
ROLLBACK;
