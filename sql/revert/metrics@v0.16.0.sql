-- Revert cyclone:metrics (back to its v0.12.0 deploy script, below, and the
-- indexes by run of v0.11.0, which the rework dropped)
-- metrics() (SPEC 14): gauges of the engine's state for exporters, one row per
-- gauge and label set. Cheap at any history size: it reads live steps and runs
-- and dead letters through partial indexes, never finished history. Counters of
-- work done are the worker's (its own exporter). For cyclone_client and up.
-- Reworked after v0.11.0: the dead-letter gauge no longer looks up each dead
-- letter's run by id (3 us a dead letter: 33 ms at 10,000). Dead letters are
-- counted by run from their index and joined to a hash of the failed runs'
-- workflows, read from an index of failed runs without the heap; only a dead
-- letter of a run that did not fail (contained by cancel_branch) is looked up
-- by id. The pending steps are counted from their index alone (an index-only
-- scan: their scheduled_at is not needed). No parallel workers: on a scrape's few hundred thousand rows their
-- start-up costs more than they save on a busy machine.
BEGIN;

DROP INDEX cyclone.cyclone_steps_pending_workflow;
DROP INDEX cyclone.cyclone_steps_dead_letters_workflow;
CREATE INDEX cyclone_steps_pending ON cyclone.cyclone_steps (run_id) WHERE state = 'pending';
CREATE INDEX cyclone_steps_dead_letters
    ON cyclone.cyclone_steps (run_id, error_kind) WHERE state = 'discarded';

-- Failed runs and their workflow, read without the heap (finished runs are
-- not updated, so their pages stay all-visible). A run enters it once, when
-- it fails; a retry that takes it back to running moves it out.
CREATE INDEX cyclone_runs_failed ON cyclone.cyclone_runs (id, workflow) WHERE state = 'failed';

CREATE OR REPLACE FUNCTION cyclone.metrics()
RETURNS TABLE (name text, labels jsonb, value double precision)
LANGUAGE plpgsql STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
-- No JIT (its compile time was most of the cost), and the live steps are
-- counted in a hash in memory: sorting them to group costs half as much again.
-- No parallel workers (see the header).
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
    WITH live_runs AS NOT MATERIALIZED (
        SELECT r.id, r.workflow, r.state FROM cyclone_runs r WHERE r.state IN ('running', 'paused')
    ), live_steps AS (
        -- One branch per partial index: each reads only its own rows. Only the
        -- available steps' scheduled_at is needed, so the pending steps, half
        -- of the live ones, are read from their index alone.
        SELECT s.run_id, 'available' AS state, s.scheduled_at FROM cyclone_steps s WHERE s.state = 'available'
        UNION ALL
        SELECT s.run_id, 'running', NULL::timestamptz FROM cyclone_steps s WHERE s.state = 'running'
        UNION ALL
        SELECT s.run_id, 'waiting', NULL FROM cyclone_steps s WHERE s.state = 'waiting'
        UNION ALL
        SELECT s.run_id, 'pending', NULL FROM cyclone_steps s WHERE s.state = 'pending'
    ), steps AS MATERIALIZED (
        SELECT r.workflow, s.state, count(*) AS n,
               min(s.scheduled_at) FILTER (WHERE s.state = 'available' AND s.scheduled_at <= v_now
                                             AND r.state = 'running') AS oldest_due
          FROM live_steps s JOIN live_runs r ON r.id = s.run_id
         GROUP BY r.workflow, s.state
    ), runs AS MATERIALIZED (
        SELECT r.workflow, r.state, count(*) AS n FROM live_runs r GROUP BY r.workflow, r.state
    ), limits AS MATERIALIZED (
        SELECT li.name, EXISTS (SELECT 1 FROM cyclone_workflows w,
                                       jsonb_array_elements(w.definition -> 'nodes') n,
                                       jsonb_array_elements(coalesce(n -> 'limits', '[]')) t
                                 WHERE t ->> 'name' = li.name AND t ? 'key') AS keyed
          FROM cyclone_limits li
    ), failed_runs AS MATERIALIZED (
        SELECT r.id, r.workflow FROM cyclone_runs r WHERE r.state = 'failed'
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
    -- Dead letters counted per run from their index; each run's workflow from
    -- the hash of failed runs, looked up by id only for a run that has not
    -- failed (a dead letter contained by cancel_branch).
    SELECT 'cyclone_dlq_steps', jsonb_build_object('workflow', d.workflow, 'error_kind', d.error_kind),
           sum(d.n)::float8
      FROM (SELECT coalesce(f.workflow, (SELECT r.workflow FROM cyclone_runs r WHERE r.id = s.run_id)) AS workflow,
                   s.error_kind, s.n
              FROM (SELECT s.run_id, s.error_kind, count(*) AS n FROM cyclone_steps s
                     WHERE s.state = 'discarded' GROUP BY s.run_id, s.error_kind) s
              LEFT JOIN failed_runs f ON f.id = s.run_id) d
     GROUP BY d.workflow, d.error_kind
    UNION ALL
    SELECT g.name, '{}'::jsonb, g.value
      FROM (SELECT count(*) FILTER (WHERE s.lease_expiry < v_now) AS expired,
                   count(DISTINCT s.lease_owner) AS workers
              FROM cyclone_steps s WHERE s.state = 'running') l
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
COMMENT ON FUNCTION cyclone.metrics() IS
    'Gauges of the engine''s state (SPEC 14): name, labels, value. Reads live rows and dead letters only.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.metrics() TO cyclone_client, cyclone_admin;

COMMIT;
