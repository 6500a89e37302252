-- Revert cyclone:sweep
BEGIN;
DROP FUNCTION cyclone.sweep(int, int);
COMMIT;
