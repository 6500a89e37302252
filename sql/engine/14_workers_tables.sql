-- sql/engine/14_workers_tables.sql: the worker registry (SPEC 18): which workers are there, alive or not,
-- whether or not they hold a step.
-- Owns: cyclone_workers.
-- Requires: 00_schema.sql.
-- Used by: register_worker, deregister_worker and _forget_workers (44_workers.sql), cyclone_v_workers
-- (15_views.sql), explain_step (36_explain.sql: how many live workers would claim a claimable step),
-- metrics (37_metrics.sql: cyclone_workers_alive) and tick (31_tick.sql: rows unseen for a day go).
-- sqitch reaches this shape through the change worker_registry.
-- Only the owner writes it (through the functions above); nothing reads it on the hot path: a claim does not
-- register, a worker refreshes its row on its poll interval, one HOT update (no index but the key).

-- One row per worker that registered: its name (the p_worker it claims with), what it says about itself
-- (info: a JSON object, see register_worker), when it first registered and when it last refreshed. A worker
-- is alive while it keeps refreshing (cyclone_v_workers: seen within the last 60 seconds).
CREATE TABLE cyclone.cyclone_workers (
    name         text PRIMARY KEY,
    info         jsonb NOT NULL DEFAULT '{}'
        CONSTRAINT workers_info_object CHECK (jsonb_typeof(info) = 'object'),
    started_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
) WITH (fillfactor = 50);
COMMENT ON TABLE cyclone.cyclone_workers IS
    'The worker registry (SPEC 18): one row per registered worker, refreshed on its poll interval.';
COMMENT ON COLUMN cyclone.cyclone_workers.info IS
    'What the worker says about itself (handlers, workflows, host, pid, version, concurrency...); untrusted.';
GRANT SELECT ON cyclone.cyclone_workers TO cyclone_admin;
