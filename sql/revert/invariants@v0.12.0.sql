-- Revert cyclone:invariants
BEGIN;

DROP FUNCTION cyclone.check_invariants();

COMMIT;
