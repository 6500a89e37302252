-- Revert cyclone:step_workflow
BEGIN;

ALTER TABLE cyclone.cyclone_steps DROP COLUMN workflow;

COMMIT;
