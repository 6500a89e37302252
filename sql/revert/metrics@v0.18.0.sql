-- Revert cyclone:metrics to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.metrics()
 RETURNS TABLE(name text, labels jsonb, value double precision)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET jit TO 'off'
 SET work_mem TO '32MB'
 SET enable_sort TO 'off'
 SET max_parallel_workers_per_gather TO '0'
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

COMMIT;
