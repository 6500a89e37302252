-- @@ engine file of change metrics; header of metrics@v0.16.0.sql:
-- Deploy cyclone:metrics
-- requires: metrics@v0.12.0 tables schedules limits clock step_workflow
-- metrics() (SPEC 14): gauges of the engine's state for exporters, one row per
-- gauge and label set. Cheap at any history size: it reads live steps and runs
-- and dead letters through partial indexes, never finished history. Counters of
-- work done are the worker's (its own exporter). For cyclone_client and up.
-- The history of its reworks is in metrics@v0.12.0.sql. Reworked after
-- v0.12.0: live steps and dead letters are counted by their own workflow
-- (step_workflow.sql), never joined to their runs: the pending steps and the
-- dead letters from an index by workflow alone (index-only scans), the
-- available, running and waiting steps from their partial indexes. The ready
-- lag leaves out the steps of paused runs by a hash of the paused runs (few),
-- not by a lookup of every step's run. The indexes by run that the joins
-- needed are dropped. No parallel workers: on a scrape's few hundred thousand
-- rows their start-up costs more than they save on a busy machine.
-- @@ plan notes of every version of this change:
-- @@ [metrics@v0.11.0.sql] metrics(): gauges of the engine's state (SPEC 14), read from live rows and dead letters only.
-- @@ [metrics@v0.12.0.sql] metrics(): the dead-letter gauge finds each dead letter's workflow in a hash of failed runs (an index-only scan), not one lookup a dead letter; no parallel workers.
-- @@ [metrics@v0.16.0.sql] metrics() counts live steps and dead letters by their own workflow, from indexes, without joining a run.
-- @@ [metrics.sql] metrics() reads the live runs once, from the live table (no index by state since live_runs), for their counts and the paused ones' ids.

-- @@ last defined in metrics.sql (a dump); prose below from metrics@v0.16.0.sql; redefined since in: metrics.sql
-- @@ comments that stood in its header:
-- No JIT (its compile time was most of the cost), and the live steps are
-- counted in a hash in memory: sorting them to group costs half as much again.
-- No parallel workers (see the header).
CREATE OR REPLACE FUNCTION cyclone.metrics()
RETURNS TABLE(name text, labels jsonb, value double precision)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET jit = off
SET work_mem = '32MB'
SET enable_sort = off
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
