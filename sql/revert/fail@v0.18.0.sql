-- Revert cyclone:fail to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._fail_step(p_step_id bigint, p_error text, p_error_kind text, p_retry_in interval)
 RETURNS text
 LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_step cyclone.cyclone_steps;
    v_delay interval;
BEGIN
    SELECT s.* INTO v_step FROM ONLY cyclone_steps s WHERE s.id = p_step_id;
    IF p_error_kind = 'permanent' OR v_step.attempt >= v_step.max_attempts THEN
        PERFORM cyclone._discard_step(p_step_id, p_error, p_error_kind);
        RETURN 'discarded';
    END IF;
    v_delay := coalesce(p_retry_in, cyclone.backoff(v_step.attempt));
    UPDATE ONLY cyclone_steps
       SET state = 'available', scheduled_at = v_now + v_delay, error = p_error, error_kind = p_error_kind,
           lease_owner = NULL, lease_expiry = NULL, failed_span = NULL
     WHERE id = p_step_id;
    INSERT INTO cyclone_step_errors (run_id, step_id, node, attempt, error_kind, error, worker, discarded, at)
    VALUES (v_step.run_id, v_step.id, v_step.node, v_step.attempt, p_error_kind, p_error, v_step.lease_owner,
            false, v_now);
    IF v_delay <= interval '0' THEN
        PERFORM cyclone._wake();
    END IF;
    RETURN 'available';
END
$$;
COMMENT ON FUNCTION cyclone._fail_step(bigint,text,text,interval) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.backoff(p_attempt integer)
 RETURNS interval
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
DECLARE
    -- 2^12 s already passes the one-hour cap, so the exponent stops there and
    -- no attempt number can overflow.
    v_delay double precision := least(3600, 2 ^ (least(greatest(p_attempt, 1), 13) - 1));
BEGIN
    IF p_attempt IS NULL THEN
        RAISE EXCEPTION 'backoff: p_attempt must not be NULL' USING ERRCODE = '22004';
    END IF;
    RETURN make_interval(secs => v_delay / 2 + random() * v_delay / 2);
END
$$;
COMMENT ON FUNCTION cyclone.backoff(integer) IS 'Default retry delay: d = least(1 hour, 2^(attempt-1) s), uniform in [d/2, d].';

CREATE OR REPLACE FUNCTION cyclone.fail(p_step_id bigint, p_worker text, p_lease_generation bigint, p_error text, p_error_kind text DEFAULT 'error'::text, p_retry_in interval DEFAULT NULL::interval, p_span text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
AS $$
DECLARE
    v_run_id uuid;
    v_state text;
BEGIN
    PERFORM cyclone._require_given('fail', p_step_id IS NOT NULL AND p_worker IS NOT NULL
                             AND p_lease_generation IS NOT NULL AND p_error IS NOT NULL,
                             'p_step_id, p_worker, p_lease_generation and p_error are required');
    PERFORM cyclone._require('fail', p_error_kind IN ('error', 'panic', 'timeout', 'permanent'),
        format('p_error_kind must be error, panic, timeout or permanent, not %s',
               coalesce(cyclone._shown(p_error_kind), 'NULL')));
    PERFORM cyclone._require('fail', coalesce(p_retry_in >= interval '0', true), 'p_retry_in must not be negative');
    IF p_span IS NOT NULL AND cyclone._traceparent_problem(p_span) IS NOT NULL THEN
        RAISE EXCEPTION 'fail: p_span % %', cyclone._shown(p_span), cyclone._traceparent_problem(p_span)
            USING ERRCODE = '22023';
    END IF;
    SELECT s.run_id INTO v_run_id FROM ONLY cyclone_steps s WHERE s.id = p_step_id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM cyclone._lock_run(v_run_id);
    PERFORM 1 FROM ONLY cyclone_steps
      WHERE id = p_step_id AND state = 'running' AND lease_owner = p_worker
        AND lease_generation = p_lease_generation
        FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    v_state := cyclone._fail_step(p_step_id, p_error, p_error_kind, p_retry_in);
    -- The span, for the next attempt's link: one more write only when there
    -- is one to keep (a retry has just cleared the old one), or on a discard
    -- (whose statement did not).
    IF p_span IS NOT NULL OR v_state = 'discarded' THEN
        UPDATE ONLY cyclone_steps SET failed_span = p_span WHERE id = p_step_id;
    END IF;
    RETURN v_state;
END
$$;
COMMENT ON FUNCTION cyclone.fail(bigint,text,bigint,text,text,interval,text) IS 'Report a failed execution, with its span (a W3C traceparent) for the next attempt''s link. Returns available (retry scheduled), discarded, or NULL when the lease is no longer ours.';

COMMIT;
