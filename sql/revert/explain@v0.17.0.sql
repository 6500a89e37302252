-- Revert cyclone:explain
BEGIN;
DROP VIEW cyclone.cyclone_v_limits;
DROP FUNCTION cyclone.explain_step(bigint);
COMMIT;
