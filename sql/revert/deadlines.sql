-- Revert cyclone:deadlines
BEGIN;
DROP FUNCTION cyclone._expire_waits(int);
DROP FUNCTION cyclone.enforce_deadlines(int);
DROP FUNCTION cyclone._expire_deadline(uuid);
COMMIT;
