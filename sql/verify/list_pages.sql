-- Verify cyclone:list_pages
BEGIN;
SELECT 'cyclone.cyclone_runs_created'::regclass, 'cyclone.cyclone_runs_workflow_created'::regclass,
       'cyclone.cyclone_runs_key'::regclass, 'cyclone.cyclone_steps_dlq_page'::regclass,
       'cyclone.cyclone_steps_dlq_kind_page'::regclass, 'cyclone.cyclone_steps_dlq_workflow_page'::regclass;
-- live_runs.sql moves runs by state to the day tables of history.
SELECT 1 / (to_regclass('cyclone.cyclone_runs_state_created') IS NOT NULL
            OR to_regclass('cyclone.cyclone_archive_queue') IS NOT NULL)::int;
ROLLBACK;
