-- Deploy cyclone:listings
-- requires: listings@v0.17.0 views checks
-- A complete copy of sql/engine/42_listings.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/42_listings.sql: change `listings` — listings as functions with filters and a limit (SPEC 15).
-- Owns: list_runs, list_steps, list_dead_letters, and _check_list_limit, their shared p_limit check. What a
-- client lists from the views, as one call that a router can push down to every shard and merge (router/,
-- change listings). Each reads its view (cyclone_v_runs, cyclone_v_steps, cyclone_v_dlq), so it returns
-- exactly the rows a query of the view would, archived runs and steps included.
-- Requires: 15_views.sql (the three views), 03_checks.sql (_shown).
-- Called by: cyclone_client and cyclone_admin (the client's list_runs, steps and dlq: the CLI, the harness;
-- on a router, list_steps goes to the run's shard and the other two to every shard). Read only: no locks.
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=listings NOTE="..."` (docs/architecture.md, Changing the engine).

-- _check_list_limit: p_limit of a listing is 1 to 10,000 (NULL: 22004, else 22023), named after p_function.
CREATE OR REPLACE FUNCTION cyclone._check_list_limit(p_function text, p_limit integer)
RETURNS void
LANGUAGE plpgsql
IMMUTABLE
AS $$
BEGIN
    IF p_limit IS NULL THEN
        RAISE EXCEPTION '%: p_limit must not be NULL', p_function USING ERRCODE = '22004';
    ELSIF p_limit NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION '%: p_limit must be from 1 to 10000, not %', p_function, p_limit USING ERRCODE = '22023';
    END IF;
END
$$;
REVOKE ALL ON FUNCTION cyclone._check_list_limit(text,integer) FROM PUBLIC;

-- list_runs: runs, newest first (created_at, then id), of one workflow and one state when given, created
-- before p_before when given (the next page's bound: the created_at of the last row of the page before).
-- 22023 for a state that is not a run state.
CREATE OR REPLACE FUNCTION cyclone.list_runs(
    p_workflow text DEFAULT NULL::text,
    p_state text DEFAULT NULL::text,
    p_limit integer DEFAULT 50,
    p_before timestamp with time zone DEFAULT NULL::timestamp with time zone)
RETURNS SETOF cyclone.cyclone_v_runs
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    PERFORM cyclone._check_list_limit('list_runs', p_limit);
    IF p_state NOT IN ('running', 'paused', 'completed', 'failed', 'cancelled') THEN
        RAISE EXCEPTION 'list_runs: p_state must be running, paused, completed, failed or cancelled, not %',
            cyclone._shown(p_state) USING ERRCODE = '22023';
    END IF;
    RETURN QUERY
        SELECT r.* FROM cyclone_v_runs r
         WHERE (p_workflow IS NULL OR r.workflow = p_workflow)
           AND (p_state IS NULL OR r.state = p_state)
           AND (p_before IS NULL OR r.created_at < p_before)
         ORDER BY r.created_at DESC, r.id
         LIMIT p_limit;
END
$$;
COMMENT ON FUNCTION cyclone.list_runs(text,text,integer,timestamp with time zone) IS 'Rows of cyclone_v_runs, newest first, of p_workflow and p_state when given, created before p_before when given; at most p_limit (1 to 10000).';
REVOKE ALL ON FUNCTION cyclone.list_runs(text,text,integer,timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.list_runs(text,text,integer,timestamp with time zone) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.list_runs(text,text,integer,timestamp with time zone) TO cyclone_admin;

-- list_steps: the steps of one run, in the order they were created (by id); none for an unknown run.
-- 22004 for a NULL run id.
CREATE OR REPLACE FUNCTION cyclone.list_steps(p_run_id uuid)
RETURNS SETOF cyclone.cyclone_v_steps
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    IF p_run_id IS NULL THEN
        RAISE EXCEPTION 'list_steps: p_run_id must not be NULL' USING ERRCODE = '22004';
    END IF;
    RETURN QUERY SELECT s.* FROM cyclone_v_steps s WHERE s.run_id = p_run_id ORDER BY s.id;
END
$$;
COMMENT ON FUNCTION cyclone.list_steps(uuid) IS 'Rows of cyclone_v_steps of one run, in the order they were created; none for an unknown run.';
REVOKE ALL ON FUNCTION cyclone.list_steps(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.list_steps(uuid) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.list_steps(uuid) TO cyclone_admin;

-- list_dead_letters: dead letters, newest first (completed_at, then id), of one workflow and one error kind
-- when given.
CREATE OR REPLACE FUNCTION cyclone.list_dead_letters(
    p_workflow text DEFAULT NULL::text,
    p_error_kind text DEFAULT NULL::text,
    p_limit integer DEFAULT 100)
RETURNS SETOF cyclone.cyclone_v_dlq
LANGUAGE plpgsql
STABLE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    PERFORM cyclone._check_list_limit('list_dead_letters', p_limit);
    RETURN QUERY
        SELECT d.* FROM cyclone_v_dlq d
         WHERE (p_workflow IS NULL OR d.workflow = p_workflow)
           AND (p_error_kind IS NULL OR d.error_kind = p_error_kind)
         ORDER BY d.completed_at DESC, d.id DESC
         LIMIT p_limit;
END
$$;
COMMENT ON FUNCTION cyclone.list_dead_letters(text,text,integer) IS 'Rows of cyclone_v_dlq (dead letters), newest first, of p_workflow and p_error_kind when given; at most p_limit (1 to 10000).';
REVOKE ALL ON FUNCTION cyclone.list_dead_letters(text,text,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.list_dead_letters(text,text,integer) TO cyclone_client;
GRANT EXECUTE ON FUNCTION cyclone.list_dead_letters(text,text,integer) TO cyclone_admin;

COMMIT;
