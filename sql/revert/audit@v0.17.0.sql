-- Revert cyclone:audit
BEGIN;

DROP VIEW cyclone.cyclone_v_audit;
ALTER TABLE cyclone.cyclone_audit ALTER COLUMN actor SET DEFAULT session_user;
DROP FUNCTION cyclone._actor();

COMMIT;
