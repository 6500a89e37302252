-- Verify cyclone:list_pages
BEGIN;
SELECT 'cyclone.cyclone_runs_created'::regclass, 'cyclone.cyclone_runs_workflow_created'::regclass,
       'cyclone.cyclone_runs_state_created'::regclass,
       'cyclone.cyclone_runs_key'::regclass, 'cyclone.cyclone_steps_dlq_page'::regclass,
       'cyclone.cyclone_steps_dlq_kind_page'::regclass, 'cyclone.cyclone_steps_dlq_workflow_page'::regclass;
ROLLBACK;
