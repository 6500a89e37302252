-- Revert cyclone:deadlines
BEGIN;
DROP FUNCTION cyclone._expire_waits(int);
DROP FUNCTION cyclone.enforce_deadlines(int);
DROP FUNCTION cyclone._expire_deadline(uuid);
DROP FUNCTION cyclone._wait_candidates(timestamptz, int);
DROP FUNCTION cyclone._deadline_candidates(timestamptz, int);
COMMIT;
