-- Verify cyclone:tables
BEGIN;
SELECT name, definition, updated_at FROM cyclone.cyclone_workflows WHERE FALSE;
SELECT id, workflow, state, input, output, created_at, started_at, finished_at, deadline_at,
       paused_at, parent_run_id, parent_step_id, idempotency_key
  FROM cyclone.cyclone_runs WHERE FALSE;
SELECT id, run_id, node, handler, kind, state, attempt, max_attempts, reclaims, scheduled_at,
       started_at, timeout, lease_owner, lease_expiry, lease_generation, heartbeat_at, input,
       output, error, error_kind, finished_at, child_run_id
  FROM cyclone.cyclone_steps WHERE FALSE;
SELECT id, run_id, name, payload, received_at FROM cyclone.cyclone_signals WHERE FALSE;
SELECT id, at, run_id, node, action, reason, actor FROM cyclone.cyclone_audit WHERE FALSE;
SELECT 1 / count(*) FROM pg_indexes WHERE schemaname = 'cyclone' AND indexname = 'cyclone_steps_claimable';
SELECT 1 / has_table_privilege('cyclone_admin', 'cyclone.cyclone_steps', 'select')::int;
SELECT 1 / (NOT has_table_privilege('cyclone_worker', 'cyclone.cyclone_steps', 'update'))::int;
ROLLBACK;
