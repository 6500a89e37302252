-- Revert cyclone:list_pages
BEGIN;

DROP INDEX cyclone.cyclone_runs_created, cyclone.cyclone_runs_workflow_created, cyclone.cyclone_runs_state_created,
           cyclone.cyclone_runs_key,
           cyclone.cyclone_steps_dlq_page, cyclone.cyclone_steps_dlq_kind_page;

COMMIT;
