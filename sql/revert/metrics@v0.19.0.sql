-- Revert cyclone:metrics to its previous version: the deploy script it had before
-- (sql/deploy/metrics@v0.18.0.sql), and a drop of each function the new version added.
BEGIN;

-- sql/engine/37_metrics.sql: change `metrics` — metrics() (SPEC 14): gauges of the engine's state for
-- exporters, one row per gauge and label set. Counters of work done are the worker's (its own exporter).
-- Owns: metrics; the partial indexes it reads (pending steps by workflow, dead letters by workflow and
-- kind) are in 10_runs_tables.sql.
-- Requires: 10_runs_tables.sql (steps, runs, workflows), 11_limits_tables.sql, 12_schedules_tables.sql,
-- 02_clock.sql (now), 35_limits.sql (_bucket_room). Called by: the exporter, `cyclone top` and the console
-- (cyclone_client, cyclone_admin). Reads only: it takes no lock.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=metrics NOTE="..."` (docs/architecture.md, Changing the engine).

-- metrics: the gauges, cheap enough to scrape every 15 s at any history size: it reads the live runs from
-- the live table, the live steps from their partial indexes and the dead letters from their index, never
-- the rows of finished runs (timings in docs/performance.md). Each input is read once (MATERIALIZED):
-- - cyclone_runs {workflow, state}: running and paused, for every defined workflow, zeros included. One
--   read of the live table (ONLY; it has no index by state, so that ending a run is a HOT update: change
--   live_runs), which also gives the ids of the paused runs.
-- - cyclone_steps {workflow, state}: pending, available, running and waiting, zeros included, each from its
--   partial index and counted by the step's own workflow (no join to its run).
-- - cyclone_ready_lag_seconds {workflow}: now minus the oldest due available step of a run that is not
--   paused (the paused runs, few, in a hash); 0 when none.
-- - cyclone_dlq_steps {workflow, error_kind}: the dead letters kept, from their index by workflow and kind.
-- - cyclone_expired_leases and cyclone_workers {}: running steps past their lease, distinct lease owners;
--   the running steps are read once for these and their count.
-- - cyclone_schedule_next_fire_timestamp_seconds {schedule}: schedules that are not paused.
-- - cyclone_limit_running: a limit some definition takes with a key reports its total {limit}, never a
--   bucket (bucket names are run input); one without a key, its bucket {limit, bucket ''}.
-- - cyclone_limit_saturated_buckets {limit}: buckets with no room (_bucket_room), among those holding slots
--   or tokens (never every bucket a key ever named).
CREATE OR REPLACE FUNCTION cyclone.metrics()
RETURNS TABLE(name text, labels jsonb, value double precision)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
-- No JIT: its compile time was most of the cost.
SET jit = off
-- The live steps are grouped in a hash in memory, with work_mem for it to fit: sorting them to group costs
-- half as much again.
SET work_mem = '32MB'
SET enable_sort = off
-- No parallel workers: on a scrape's few hundred thousand rows their start-up costs more than they save on
-- a busy machine.
SET max_parallel_workers_per_gather = 0
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := cyclone.now();
BEGIN
    RETURN QUERY
    WITH runs AS MATERIALIZED (
        -- One read of the live runs (their table has no index by state:
        -- live_runs.sql) for their counts and the ids of the paused ones.
        SELECT r.workflow, r.state, count(*) AS n, array_agg(r.id) FILTER (WHERE r.state = 'paused') AS paused
          FROM ONLY cyclone_runs r WHERE r.state IN ('running', 'paused')
         GROUP BY r.workflow, r.state
    ), paused_runs AS MATERIALIZED (
        SELECT u.id FROM runs x CROSS JOIN unnest(x.paused) AS u(id)
    ), running AS MATERIALIZED (
        -- Read once for three gauges: steps by workflow, expired leases, workers.
        SELECT s.workflow, s.lease_owner, s.lease_expiry FROM cyclone_steps s WHERE s.state = 'running'
    ), steps AS MATERIALIZED (
        -- One branch per partial index: each reads only its own rows.
        SELECT s.workflow, 'available' AS state, count(*) AS n,
               min(s.scheduled_at) FILTER (WHERE s.scheduled_at <= v_now AND p.id IS NULL) AS oldest_due
          FROM cyclone_steps s LEFT JOIN paused_runs p ON p.id = s.run_id
         WHERE s.state = 'available'
         GROUP BY s.workflow
        UNION ALL
        SELECT x.workflow, 'running', count(*), NULL FROM running x GROUP BY x.workflow
        UNION ALL
        SELECT s.workflow, 'waiting', count(*), NULL FROM cyclone_steps s WHERE s.state = 'waiting'
         GROUP BY s.workflow
        UNION ALL
        SELECT s.workflow, 'pending', count(*), NULL FROM cyclone_steps s WHERE s.state = 'pending'
         GROUP BY s.workflow
    ), limits AS MATERIALIZED (
        SELECT li.name, EXISTS (SELECT 1 FROM cyclone_workflows w,
                                       jsonb_array_elements(w.definition -> 'nodes') n,
                                       jsonb_array_elements(coalesce(n -> 'limits', '[]')) t
                                 WHERE t ->> 'name' = li.name AND t ? 'key') AS keyed
          FROM cyclone_limits li
    ), busy AS MATERIALIZED (
        SELECT x.bucket_id FROM cyclone_slots x
        UNION
        SELECT c.bucket_id FROM cyclone_bucket_claims c
    )
    SELECT 'cyclone_runs', jsonb_build_object('workflow', w.name, 'state', st.state), coalesce(x.n, 0)::float8
      FROM cyclone_workflows w CROSS JOIN unnest(ARRAY['running', 'paused']) AS st(state)
      LEFT JOIN runs x ON x.workflow = w.name AND x.state = st.state
    UNION ALL
    SELECT 'cyclone_steps', jsonb_build_object('workflow', w.name, 'state', st.state), coalesce(x.n, 0)::float8
      FROM cyclone_workflows w CROSS JOIN unnest(ARRAY['pending', 'available', 'running', 'waiting']) AS st(state)
      LEFT JOIN steps x ON x.workflow = w.name AND x.state = st.state
    UNION ALL
    SELECT 'cyclone_ready_lag_seconds', jsonb_build_object('workflow', w.name),
           coalesce(extract(epoch FROM v_now - x.oldest_due), 0)::float8
      FROM cyclone_workflows w LEFT JOIN steps x ON x.workflow = w.name AND x.state = 'available'
    UNION ALL
    SELECT 'cyclone_dlq_steps', jsonb_build_object('workflow', s.workflow, 'error_kind', s.error_kind),
           count(*)::float8
      FROM cyclone_steps s WHERE s.state = 'discarded'
     GROUP BY s.workflow, s.error_kind
    UNION ALL
    SELECT g.name, '{}'::jsonb, g.value
      FROM (SELECT count(*) FILTER (WHERE x.lease_expiry < v_now) AS expired,
                   count(DISTINCT x.lease_owner) AS workers
              FROM running x) l
     CROSS JOIN LATERAL (VALUES ('cyclone_expired_leases', l.expired::float8),
                                ('cyclone_workers', l.workers::float8)) AS g(name, value)
    UNION ALL
    SELECT 'cyclone_schedule_next_fire_timestamp_seconds', jsonb_build_object('schedule', sc.name),
           extract(epoch FROM sc.next_fire_at)::float8
      FROM cyclone_schedules sc WHERE NOT sc.paused
    UNION ALL
    -- Limits: a limit some definition takes with a key reports its total, never
    -- a bucket (bucket names are run input); one without a key, its bucket ''.
    SELECT 'cyclone_limit_running',
           CASE WHEN l.keyed THEN jsonb_build_object('limit', l.name)
                ELSE jsonb_build_object('limit', l.name, 'bucket', '') END,
           (SELECT count(*) FROM cyclone_slots x JOIN cyclone_buckets b ON b.id = x.bucket_id
             WHERE b.limit_name = l.name)::float8
      FROM limits l
    UNION ALL
    -- A bucket without room: its running slots or its rate window are full.
    -- Only buckets holding slots or claim times can be (never every bucket a
    -- key ever named).
    SELECT 'cyclone_limit_saturated_buckets', jsonb_build_object('limit', l.name),
           (SELECT count(*) FROM busy k JOIN cyclone_buckets b ON b.id = k.bucket_id
             WHERE b.limit_name = l.name AND cyclone._bucket_room(b.id, v_now) = 0)::float8
      FROM limits l;
END
$$;
COMMENT ON FUNCTION cyclone.metrics() IS 'Gauges of the engine''s state (SPEC 14): name, labels, value. Reads live rows and dead letters only.';
REVOKE ALL ON FUNCTION cyclone.metrics() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.metrics() TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.metrics() TO cyclone_admin;

COMMIT;
