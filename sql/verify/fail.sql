-- Verify cyclone:fail
BEGIN;
SELECT 'cyclone.backoff(int)'::regprocedure,
       'cyclone.fail(bigint, text, bigint, text, text, interval)'::regprocedure;
ROLLBACK;
