-- Verify cyclone:views
BEGIN;
SELECT name, definition, updated_at FROM cyclone.cyclone_v_workflows WHERE FALSE;
SELECT id, workflow, state, input, output, created_at, finished_at, deadline_at, paused_at
  FROM cyclone.cyclone_v_runs WHERE FALSE;
SELECT run_id, node, kind, state, attempt, max_attempts, reclaims, error, error_kind,
       scheduled_at, started_at, completed_at
  FROM cyclone.cyclone_v_steps WHERE FALSE;
SELECT run_id, node, workflow, error_kind, completed_at FROM cyclone.cyclone_v_dlq WHERE FALSE;
SELECT 1 / has_table_privilege('cyclone_client', 'cyclone.cyclone_v_steps', 'select')::int;
SELECT 1 / has_table_privilege('cyclone_admin', 'cyclone.cyclone_v_dlq', 'select')::int;
-- A rate period stored beyond 366 days counts as 366 days in cyclone_v_limits (issue 30).
SELECT 1 / (pg_get_viewdef('cyclone.cyclone_v_limits'::regclass) ~ 'LEAST\(l\.period, ''366 days''')::int;
-- The worker registry's view (SPEC 18).
SELECT name, info, started_at, last_seen_at, alive, running FROM cyclone.cyclone_v_workers WHERE false;
SELECT 1 / has_table_privilege('cyclone_worker', 'cyclone.cyclone_v_workers', 'select')::int;
SELECT 1 / has_table_privilege('cyclone_client', 'cyclone.cyclone_v_workers', 'select')::int;
-- SPEC 16's columns (issue 33).
SELECT priority FROM cyclone.cyclone_v_runs WHERE false;
SELECT snoozes, progress, progress_at FROM cyclone.cyclone_v_steps WHERE false;
SELECT snoozes, progress, progress_at FROM cyclone.cyclone_v_dlq WHERE false;
SELECT rerun_of FROM cyclone.cyclone_v_runs WHERE false;
SELECT event_key, awaited_run_id, spec FROM cyclone.cyclone_v_steps WHERE false;
SELECT key, payload, emitted_at FROM cyclone.cyclone_v_events WHERE false;
ROLLBACK;
