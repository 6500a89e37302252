-- Deploy cyclone:overview
-- requires: tables clock history live_runs listings views
-- A complete copy of sql/engine/48_overview.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/48_overview.sql: change `overview` — what the web console's overview reads (docs/console.md),
-- each a bounded read through indexes, whatever the history (a million runs and more; bench.console).
-- Owns: overview_gauges, finished_per_minute, finished_runs, and _finished_sources, the query text their two
-- reads of finished runs share.
-- Requires: 10_runs_tables.sql (workflows, runs, steps), 13_history_tables.sql (cyclone_history, the day
-- tables; cyclone_archive_queue, the finished runs still in the live table), 43_history.sql
-- (_history_day_of), 02_clock.sql (now), 42_listings.sql (_check_list_limit), 15_views.sql (cyclone_v_runs).
-- Called by: cyclone_client and cyclone_admin (the console's overview and its runs list, through the client).
-- Reads only: no locks.
--
-- Why not metrics(): it reads the live runs table whole (it has no index by state, so that ending a run is a
-- HOT update: 10_runs_tables.sql), and after a backlog is archived that table is mostly free space (279 MB
-- for 10,000 live rows in bench.console). Here the live runs are read through the (workflow, created_at, id)
-- index, at most p_cap + 1 of each workflow; and runs finished in a window are read where they are listed
-- by finish time: cyclone_archive_queue for the live table (read whole, as archive() reads it: what finished
-- since the last archive), and the (finished_at) index of each day table the window overlaps, never the
-- live table's heap (it has no index on finished_at).
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=overview NOTE="..."` (docs/architecture.md, Changing the engine).

-- overview_gauges: the overview's numbers, as metrics() names them (one row per gauge and label set):
-- - cyclone_runs {workflow, state}: running and paused, for every defined workflow, counted among its first
--   p_cap live runs (oldest first, through cyclone_runs_workflow_created, which reads p_cap + 1 to know);
--   cyclone_runs_capped {workflow} = 1 when it has more than p_cap, and the two counts are then of the
--   first p_cap (running + paused = p_cap: the console writes "100+").
-- - cyclone_steps {workflow, state 'available'} and cyclone_ready_lag_seconds {workflow}: the ready steps
--   (their partial index) and how long the oldest due one of a run that is not paused has waited: the due
--   steps are taken oldest first and a step's run is looked up (by its primary key) only until each workflow
--   has one whose run is running, so paused runs cost a lookup each, and nothing else does.
-- - cyclone_dlq_steps {workflow, error_kind}: the dead letters, from their index by workflow and kind (an
--   index-only read of the live table and each day table).
-- - cyclone_expired_leases {}: running steps past their lease (their partial index).
-- p_cap 1 to 10,000 (NULL: 22004, else 22023).
CREATE OR REPLACE FUNCTION cyclone.overview_gauges(p_cap integer DEFAULT 100)
RETURNS TABLE(name text, labels jsonb, value double precision)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := cyclone.now();
    v_step record;
    v_lag jsonb := '{}'::jsonb;
    v_ready int;
BEGIN
    IF p_cap IS NULL THEN
        RAISE EXCEPTION 'overview_gauges: p_cap must not be NULL' USING ERRCODE = '22004';
    ELSIF p_cap NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION 'overview_gauges: p_cap must be from 1 to 10000, not %', p_cap USING ERRCODE = '22023';
    END IF;
    -- The oldest due step of a running run, per workflow: due steps oldest first, each run looked up until
    -- every workflow with due steps has its answer (a paused run's steps are passed over).
    SELECT count(DISTINCT s.workflow) INTO v_ready
      FROM ONLY cyclone_steps s
     WHERE s.state = 'available' AND s.scheduled_at <= v_now AND isfinite(s.scheduled_at);
    FOR v_step IN
        SELECT s.workflow, s.run_id, s.scheduled_at FROM ONLY cyclone_steps s
         WHERE s.state = 'available' AND s.scheduled_at <= v_now AND isfinite(s.scheduled_at)
         ORDER BY s.scheduled_at
    LOOP
        EXIT WHEN v_ready = 0;
        CONTINUE WHEN v_lag ? v_step.workflow;
        IF EXISTS (SELECT 1 FROM ONLY cyclone_runs r WHERE r.id = v_step.run_id AND r.state = 'running') THEN
            v_lag := v_lag || jsonb_build_object(v_step.workflow, extract(epoch FROM v_now - v_step.scheduled_at));
            v_ready := v_ready - 1;
        END IF;
    END LOOP;
    RETURN QUERY
    WITH live AS MATERIALIZED (
        SELECT w.name AS workflow, count(*) FILTER (WHERE x.state = 'running' AND x.n <= p_cap) AS running,
               count(*) FILTER (WHERE x.state = 'paused' AND x.n <= p_cap) AS paused,
               count(x.state) > p_cap AS capped
          FROM cyclone_workflows w
          LEFT JOIN LATERAL (
              SELECT r.state, row_number() OVER (ORDER BY r.created_at, r.id) AS n FROM ONLY cyclone_runs r
               WHERE r.workflow = w.name AND r.state IN ('running', 'paused')
               ORDER BY r.created_at, r.id
               LIMIT p_cap + 1) x ON true
         GROUP BY w.name
    ), ready AS MATERIALIZED (
        SELECT s.workflow, count(*) AS n FROM ONLY cyclone_steps s WHERE s.state = 'available' GROUP BY s.workflow
    )
    SELECT 'cyclone_runs', jsonb_build_object('workflow', l.workflow, 'state', st.state),
           (CASE st.state WHEN 'running' THEN l.running ELSE l.paused END)::float8
      FROM live l CROSS JOIN unnest(ARRAY['running', 'paused']) AS st(state)
    UNION ALL
    SELECT 'cyclone_runs_capped', jsonb_build_object('workflow', l.workflow), 1::float8
      FROM live l WHERE l.capped
    UNION ALL
    SELECT 'cyclone_steps', jsonb_build_object('workflow', w.name, 'state', 'available'), coalesce(x.n, 0)::float8
      FROM cyclone_workflows w LEFT JOIN ready x ON x.workflow = w.name
    UNION ALL
    SELECT 'cyclone_ready_lag_seconds', jsonb_build_object('workflow', w.name),
           coalesce((v_lag ->> w.name)::float8, 0)
      FROM cyclone_workflows w
    UNION ALL
    SELECT 'cyclone_dlq_steps', jsonb_build_object('workflow', s.workflow, 'error_kind', s.error_kind),
           count(*)::float8
      FROM cyclone_steps s WHERE s.state = 'discarded'
     GROUP BY s.workflow, s.error_kind
    UNION ALL
    SELECT 'cyclone_expired_leases', '{}'::jsonb, count(*)::float8
      FROM ONLY cyclone_steps s WHERE s.state = 'running' AND s.lease_expiry < v_now;
END
$$;
COMMENT ON FUNCTION cyclone.overview_gauges(integer) IS 'The web console overview''s numbers, named as metrics() names them: each workflow''s running and paused runs counted among its first p_cap live ones (cyclone_runs_capped when it has more), its ready steps and their lag, its dead letters by kind, the expired leases. Bounded reads through indexes.';
REVOKE ALL ON FUNCTION cyclone.overview_gauges(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.overview_gauges(integer) TO cyclone_client, cyclone_admin;

-- _finished_sources: the text of a query of the runs that finished in [$1, $2) (id, finished_at): the live
-- table's, listed in cyclone_archive_queue (and looked up by primary key), then one branch per day table
-- whose UTC day overlaps the window, through its (finished_at) index. NULL arguments: 22004 (the callers
-- check them first). Internal.
CREATE OR REPLACE FUNCTION cyclone._finished_sources(p_since timestamp with time zone,
                                                     p_until timestamp with time zone)
RETURNS text
LANGUAGE sql
STABLE
AS $$
    SELECT 'SELECT r.id, r.workflow, r.state, q.finished_at FROM cyclone.cyclone_archive_queue q '
           'JOIN ONLY cyclone.cyclone_runs r ON r.id = q.run_id WHERE q.finished_at >= $1 AND q.finished_at < $2'
           || coalesce(string_agg(format(' UNION ALL SELECT d.id, d.workflow, d.state, d.finished_at FROM %s d '
                                         'WHERE d.finished_at >= $1 AND d.finished_at < $2', h.runs), ''
                                  ORDER BY h.day), '')
      FROM cyclone.cyclone_history h
     WHERE h.day BETWEEN cyclone._history_day_of(p_since) AND cyclone._history_day_of(p_until)
$$;
REVOKE ALL ON FUNCTION cyclone._finished_sources(timestamp with time zone, timestamp with time zone) FROM PUBLIC;

-- finished_per_minute: the runs that finished in [p_since, p_until), counted by workflow, state (completed,
-- failed, cancelled) and minute of finishing (date_bin from p_since): the console's sparklines of the last
-- hour. One statement over _finished_sources, so a run archived meanwhile is counted once. NULL: 22004; a
-- window that is empty or longer than a day: 22023.
CREATE OR REPLACE FUNCTION cyclone.finished_per_minute(p_since timestamp with time zone,
                                                       p_until timestamp with time zone)
RETURNS TABLE(workflow text, state text, minute timestamp with time zone, runs bigint)
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    IF p_since IS NULL OR p_until IS NULL THEN
        RAISE EXCEPTION 'finished_per_minute: p_since and p_until must not be NULL' USING ERRCODE = '22004';
    ELSIF NOT (isfinite(p_since) AND isfinite(p_until)) OR p_until <= p_since
          OR p_until - p_since > interval '1 day' THEN
        RAISE EXCEPTION 'finished_per_minute: the window [%, %) must be finite, not empty and at most a day',
            p_since, p_until USING ERRCODE = '22023';
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT f.workflow, f.state, date_bin(''1 minute'', f.finished_at, $1), count(*) FROM (%s) f '
        'GROUP BY 1, 2, 3 ORDER BY 1, 2, 3', cyclone._finished_sources(p_since, p_until))
        USING p_since, p_until;
END
$$;
COMMENT ON FUNCTION cyclone.finished_per_minute(timestamp with time zone, timestamp with time zone) IS 'The runs that finished in [p_since, p_until) (at most a day) by workflow, state and minute of finishing, read through cyclone_archive_queue and the day tables'' finished_at index.';
REVOKE ALL ON FUNCTION cyclone.finished_per_minute(timestamp with time zone, timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.finished_per_minute(timestamp with time zone, timestamp with time zone)
    TO cyclone_client, cyclone_admin;

-- finished_runs: a page of the runs that finished in [p_since, p_until), of one workflow and one state when
-- given, newest finish first (finished_at, then id, descending), after the keyset cursor (p_after_at,
-- p_after_id) when given: the list behind each number and bar of finished_per_minute. Rows of
-- cyclone_v_runs. NULL window or limit: 22004; a window as finished_per_minute refuses, a limit outside 1 to
-- 10,000, a state that is not a finished one, or half a cursor: 22023.
CREATE OR REPLACE FUNCTION cyclone.finished_runs(
    p_since timestamp with time zone,
    p_until timestamp with time zone,
    p_workflow text DEFAULT NULL::text,
    p_state text DEFAULT NULL::text,
    p_limit integer DEFAULT 50,
    p_after_at timestamp with time zone DEFAULT NULL::timestamp with time zone,
    p_after_id uuid DEFAULT NULL::uuid)
RETURNS SETOF cyclone.cyclone_v_runs
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    IF p_since IS NULL OR p_until IS NULL THEN
        RAISE EXCEPTION 'finished_runs: p_since and p_until must not be NULL' USING ERRCODE = '22004';
    ELSIF NOT (isfinite(p_since) AND isfinite(p_until)) OR p_until <= p_since
          OR p_until - p_since > interval '1 day' THEN
        RAISE EXCEPTION 'finished_runs: the window [%, %) must be finite, not empty and at most a day',
            p_since, p_until USING ERRCODE = '22023';
    ELSIF p_state IS NOT NULL AND p_state NOT IN ('completed', 'failed', 'cancelled') THEN
        RAISE EXCEPTION 'finished_runs: p_state must be completed, failed or cancelled, not %', p_state
            USING ERRCODE = '22023';
    ELSIF (p_after_at IS NULL) <> (p_after_id IS NULL) THEN
        RAISE EXCEPTION 'finished_runs: p_after_at and p_after_id go together' USING ERRCODE = '22023';
    END IF;
    PERFORM cyclone._check_list_limit('finished_runs', p_limit);
    RETURN QUERY EXECUTE format(
        'SELECT v.* FROM (SELECT f.id, f.finished_at FROM (%s) f '
        ' WHERE ($3::text IS NULL OR f.workflow = $3) AND ($4::text IS NULL OR f.state = $4) '
        '   AND ($6::timestamptz IS NULL OR (f.finished_at, f.id) < ($6, $7)) '
        ' ORDER BY f.finished_at DESC, f.id DESC LIMIT $5) p '
        'CROSS JOIN LATERAL (SELECT * FROM cyclone.cyclone_v_runs v WHERE v.id = p.id) v '
        'ORDER BY p.finished_at DESC, p.id DESC', cyclone._finished_sources(p_since, p_until))
        USING p_since, p_until, p_workflow, p_state, p_limit, p_after_at, p_after_id;
END
$$;
COMMENT ON FUNCTION cyclone.finished_runs(timestamp with time zone, timestamp with time zone, text, text, integer, timestamp with time zone, uuid) IS 'A page of the runs that finished in [p_since, p_until) (at most a day), of a workflow and a state when given, newest finish first, after the cursor (p_after_at, p_after_id).';
REVOKE ALL ON FUNCTION cyclone.finished_runs(timestamp with time zone, timestamp with time zone, text, text, integer, timestamp with time zone, uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.finished_runs(timestamp with time zone, timestamp with time zone, text, text, integer, timestamp with time zone, uuid)
    TO cyclone_client, cyclone_admin;

COMMIT;
