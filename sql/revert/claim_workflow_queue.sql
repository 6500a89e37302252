-- Revert cyclone:claim_workflow_queue
DROP INDEX IF EXISTS cyclone.cyclone_steps_claimable_workflow;
