-- Verify cyclone:prune
BEGIN;
SELECT 'cyclone.prune(interval, int)'::regprocedure;
ROLLBACK;
