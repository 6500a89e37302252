-- Revert cyclone:sweep
BEGIN;
DROP FUNCTION cyclone.sweep(int, int);
DROP FUNCTION cyclone._sweep_candidates(timestamptz, int);
COMMIT;
