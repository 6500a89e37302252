-- Verify cyclone:sweep
BEGIN;
SELECT 'cyclone.sweep(int, int)'::regprocedure;
ROLLBACK;
