-- Revert cyclone:fail
BEGIN;
DROP FUNCTION cyclone.fail(bigint, text, bigint, text, text, interval);
DROP FUNCTION cyclone._fail_step(bigint, text, text, interval);
DROP FUNCTION cyclone.backoff(int);
COMMIT;
