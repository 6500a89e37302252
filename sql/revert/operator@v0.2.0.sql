-- Revert cyclone:operator
BEGIN;
DROP FUNCTION cyclone.resume(uuid);
DROP FUNCTION cyclone.pause(uuid);
DROP FUNCTION cyclone.cancel(uuid, text);
DROP FUNCTION cyclone.retry_all(uuid, text);
DROP FUNCTION cyclone.retry(uuid, text, int, text);
DROP FUNCTION cyclone._reopen(cyclone.cyclone_runs, bigint[], int, text);
COMMIT;
