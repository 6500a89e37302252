-- Revert cyclone:prune
BEGIN;
DROP FUNCTION cyclone.prune(interval, int);
COMMIT;
