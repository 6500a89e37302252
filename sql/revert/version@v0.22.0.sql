-- Revert cyclone:version
BEGIN;

DROP FUNCTION IF EXISTS cyclone.version();

COMMIT;
