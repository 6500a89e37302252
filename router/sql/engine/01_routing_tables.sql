-- router/sql/engine/01_routing_tables.sql: the row types the routed listings return, as a shard's views have them.
-- sqitch made them with change `routing` (sql/deploy/routing@v0.17.0.sql); row_types_dynamic added the attributes
-- a shard's views gained at 0.21.0, and row_types_coordination those of 0.22.0 (appended, as the views append
-- them).

-- The row type of cyclone_v_steps on a shard (list_steps, list_dead_letters).
CREATE TYPE cyclone.step_row AS (
    id bigint, run_id uuid, workflow text, node text, handler text, kind text, state text, attempt int,
    max_attempts int, reclaims int, error text, error_kind text, scheduled_at timestamptz, started_at timestamptz,
    completed_at timestamptz, deps text[], on_dep_failure text, priority int, timeout interval, lease_owner text,
    lease_expiry timestamptz, lease_generation bigint, heartbeat_at timestamptz, signal text, max_wait interval,
    wait_expires_at timestamptz, child_run_id uuid, input jsonb, output jsonb, snoozes int, progress jsonb,
    progress_at timestamptz, item_index int, item jsonb, event_key text, awaited_run_id uuid, spec jsonb);
-- And of cyclone_v_runs (list_runs).
CREATE TYPE cyclone.run_row AS (
    id uuid, workflow text, state text, input jsonb, output jsonb, created_at timestamptz, started_at timestamptz,
    finished_at timestamptz, deadline_at timestamptz, paused_at timestamptz, parent_run_id uuid,
    parent_step_id bigint, idempotency_key text, priority int, rerun_of uuid);
