-- Revert cyclone:list_pages (back to its v0.12.0 deploy: its indexes stay)
BEGIN;

DROP INDEX cyclone.cyclone_steps_dlq_workflow_page;

COMMIT;
