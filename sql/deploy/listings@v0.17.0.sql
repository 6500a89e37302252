-- Deploy cyclone:listings
-- requires: views checks
-- Listings as functions with their filters and a limit (SPEC 15): what a
-- client lists from the views, as one call a router can push down to every
-- shard and merge (router/deploy/routing.sql). Each reads its view, so it
-- returns exactly the rows a query of the view would.
BEGIN;

-- p_limit of a listing: 1 to 10,000 (NULL: 22004).
CREATE OR REPLACE FUNCTION cyclone._check_list_limit(p_function text, p_limit int)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $$
BEGIN
    IF p_limit IS NULL THEN
        RAISE EXCEPTION '%: p_limit must not be NULL', p_function USING ERRCODE = '22004';
    ELSIF p_limit NOT BETWEEN 1 AND 10000 THEN
        RAISE EXCEPTION '%: p_limit must be from 1 to 10000, not %', p_function, p_limit USING ERRCODE = '22023';
    END IF;
END
$$;

-- Runs, newest first (created_at, then id), of one workflow and state when
-- given, created before p_before when given (the next page's bound).
CREATE OR REPLACE FUNCTION cyclone.list_runs(
    p_workflow text DEFAULT NULL, p_state text DEFAULT NULL, p_limit int DEFAULT 50,
    p_before timestamptz DEFAULT NULL)
RETURNS SETOF cyclone.cyclone_v_runs
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = cyclone, pg_temp
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

-- The steps of one run, in the order they were created (none for an unknown run).
CREATE OR REPLACE FUNCTION cyclone.list_steps(p_run_id uuid)
RETURNS SETOF cyclone.cyclone_v_steps
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = cyclone, pg_temp
AS $$
BEGIN
    IF p_run_id IS NULL THEN
        RAISE EXCEPTION 'list_steps: p_run_id must not be NULL' USING ERRCODE = '22004';
    END IF;
    RETURN QUERY SELECT s.* FROM cyclone_v_steps s WHERE s.run_id = p_run_id ORDER BY s.id;
END
$$;

-- Dead letters, newest first (completed_at, then id), of one workflow and
-- error kind when given.
CREATE OR REPLACE FUNCTION cyclone.list_dead_letters(
    p_workflow text DEFAULT NULL, p_error_kind text DEFAULT NULL, p_limit int DEFAULT 100)
RETURNS SETOF cyclone.cyclone_v_dlq
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = cyclone, pg_temp
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

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.list_runs(text, text, int, timestamptz), cyclone.list_steps(uuid),
                          cyclone.list_dead_letters(text, text, int)
    TO cyclone_client, cyclone_admin;

COMMIT;
