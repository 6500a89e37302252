-- Verify cyclone:deadlines
BEGIN;
SELECT 'cyclone.enforce_deadlines(int)'::regprocedure, 'cyclone._expire_waits(int)'::regprocedure;
ROLLBACK;
