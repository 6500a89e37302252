-- Revert cyclone:deadlines to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._deadline_candidates(p_now timestamp with time zone, p_limit integer)
 RETURNS SETOF uuid
 LANGUAGE sql
 STABLE
AS $$
    SELECT r.id
      FROM ONLY cyclone.cyclone_runs r
     WHERE r.state = 'running' AND r.deadline_at < p_now
     ORDER BY r.deadline_at, r.id
     LIMIT p_limit
$$;
COMMENT ON FUNCTION cyclone._deadline_candidates(timestamp with time zone,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._expire_deadline(p_run_id uuid)
 RETURNS void
 LANGUAGE plpgsql
AS $$
BEGIN
    PERFORM cyclone._discard_steps(
        ARRAY(SELECT s.id FROM ONLY cyclone_steps s
               WHERE s.run_id = p_run_id AND s.state IN ('available', 'running', 'waiting')
               ORDER BY s.id),
        'run deadline exceeded', 'deadline');
    PERFORM cyclone._end_run_and_notify(p_run_id, 'failed', 'run deadline exceeded');
    -- Handlers still running for this run stop at once; renew() is the backstop.
    PERFORM pg_notify('cyclone_cancel', p_run_id::text);
END
$$;
COMMENT ON FUNCTION cyclone._expire_deadline(uuid) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._expire_waits(p_limit integer)
 RETURNS SETOF bigint
 LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_candidate record;
    v_step cyclone.cyclone_steps;
BEGIN
    FOR v_candidate IN
        SELECT c.id, c.run_id
          FROM cyclone._wait_candidates(v_now, p_limit) c
         ORDER BY cyclone._root_run(c.run_id), c.run_id, c.id
    LOOP
        CONTINUE WHEN (cyclone._lock_run(v_candidate.run_id)).state IS DISTINCT FROM 'running';
        SELECT s.* INTO v_step FROM ONLY cyclone_steps s
         WHERE s.id = v_candidate.id AND s.state = 'waiting' AND s.wait_expires_at < v_now
           FOR UPDATE;
        CONTINUE WHEN NOT FOUND;
        PERFORM cyclone._discard_step(v_step.id,
            format('%s node waited longer than max_wait %s', v_step.kind, v_step.max_wait), 'max_wait');
        RETURN NEXT v_step.id;
    END LOOP;
END
$$;
COMMENT ON FUNCTION cyclone._expire_waits(integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._wait_candidates(p_now timestamp with time zone, p_limit integer)
 RETURNS TABLE(id bigint, run_id uuid)
 LANGUAGE sql
 STABLE
AS $$
    SELECT s.id, s.run_id
      FROM cyclone.cyclone_steps s
      JOIN cyclone.cyclone_runs r ON r.id = s.run_id AND r.state = 'running'
     WHERE s.state = 'waiting' AND s.wait_expires_at < p_now
     ORDER BY s.wait_expires_at, s.id
     LIMIT p_limit
$$;
COMMENT ON FUNCTION cyclone._wait_candidates(timestamp with time zone,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.enforce_deadlines(p_limit integer DEFAULT 100)
 RETURNS SETOF uuid
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_run_id uuid;
    v_run cyclone.cyclone_runs;
    v_ids uuid[];
BEGIN
    PERFORM cyclone._require('enforce_deadlines', p_limit > 0, 'p_limit must be positive');
    v_ids := ARRAY(SELECT cyclone._deadline_candidates(v_now, p_limit));
    -- Locked in root-run order, then failed most overdue first.
    FOR v_run_id IN SELECT u FROM unnest(v_ids) u ORDER BY cyclone._root_run(u), u LOOP
        PERFORM cyclone._lock_run(v_run_id);
    END LOOP;
    FOREACH v_run_id IN ARRAY v_ids LOOP
        v_run := cyclone._lock_run(v_run_id);
        CONTINUE WHEN v_run.state IS DISTINCT FROM 'running' OR NOT (v_run.deadline_at < v_now);
        PERFORM cyclone._expire_deadline(v_run_id);
        RETURN NEXT v_run_id;
    END LOOP;
END
$$;
COMMENT ON FUNCTION cyclone.enforce_deadlines(integer) IS 'Fail every running run past its deadline (at most p_limit a call); returns their ids.';

COMMIT;
