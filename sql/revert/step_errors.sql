-- Revert cyclone:step_errors
BEGIN;
DROP TABLE cyclone.cyclone_step_errors;
COMMIT;
