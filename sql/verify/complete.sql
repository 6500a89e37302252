-- Verify cyclone:complete
BEGIN;
SELECT 'cyclone.complete(bigint, text, bigint, jsonb)'::regprocedure,
       'cyclone.complete_many(text, bigint[], bigint[], jsonb[])'::regprocedure;
ROLLBACK;
