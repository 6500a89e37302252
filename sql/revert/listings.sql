-- Revert cyclone:listings to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

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
COMMENT ON FUNCTION cyclone._check_list_limit(text,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.list_dead_letters(p_workflow text DEFAULT NULL::text, p_error_kind text DEFAULT NULL::text, p_limit integer DEFAULT 100)
 RETURNS SETOF cyclone.cyclone_v_dlq
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
COMMENT ON FUNCTION cyclone.list_dead_letters(text,text,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.list_runs(p_workflow text DEFAULT NULL::text, p_state text DEFAULT NULL::text, p_limit integer DEFAULT 50, p_before timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS SETOF cyclone.cyclone_v_runs
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
COMMENT ON FUNCTION cyclone.list_runs(text,text,integer,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.list_steps(p_run_id uuid)
 RETURNS SETOF cyclone.cyclone_v_steps
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
BEGIN
    IF p_run_id IS NULL THEN
        RAISE EXCEPTION 'list_steps: p_run_id must not be NULL' USING ERRCODE = '22004';
    END IF;
    RETURN QUERY SELECT s.* FROM cyclone_v_steps s WHERE s.run_id = p_run_id ORDER BY s.id;
END
$$;
COMMENT ON FUNCTION cyclone.list_steps(uuid) IS NULL;

COMMIT;
