-- Revert cyclone:fail (back to its v0.11.0 deploy script, below)
-- backoff() and fail(): a failed execution returns the step to available after a
-- jittered exponential delay while attempts remain, else discards it and applies
-- the DAG's failure policy. fail() is a compare-and-set like complete().
-- Lock order: the run (after its ancestors), then its steps.
BEGIN;

DROP FUNCTION cyclone.fail(bigint, text, bigint, text, text, interval, text);

CREATE OR REPLACE FUNCTION cyclone.backoff(p_attempt int)
RETURNS interval
LANGUAGE plpgsql VOLATILE
SECURITY DEFINER
SET search_path = cyclone, pg_temp
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
COMMENT ON FUNCTION cyclone.backoff(int) IS
    'Default retry delay: d = least(1 hour, 2^(attempt-1) s), uniform in [d/2, d].';

-- The failed-execution transition, shared by fail() and the sweep's timeouts.
-- The caller holds the run lock and has matched the running step. The error is
-- kept in cyclone_step_errors (a discard's by _discard_steps).
CREATE OR REPLACE FUNCTION cyclone._fail_step(p_step_id bigint, p_error text, p_error_kind text, p_retry_in interval)
RETURNS text
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_step cyclone.cyclone_steps;
    v_delay interval;
BEGIN
    SELECT s.* INTO v_step FROM cyclone_steps s WHERE s.id = p_step_id;
    IF p_error_kind = 'permanent' OR v_step.attempt >= v_step.max_attempts THEN
        PERFORM cyclone._discard_step(p_step_id, p_error, p_error_kind);
        RETURN 'discarded';
    END IF;
    v_delay := coalesce(p_retry_in, cyclone.backoff(v_step.attempt));
    UPDATE cyclone_steps
       SET state = 'available', scheduled_at = v_now + v_delay, error = p_error, error_kind = p_error_kind,
           lease_owner = NULL, lease_expiry = NULL
     WHERE id = p_step_id;
    INSERT INTO cyclone_step_errors (run_id, step_id, node, attempt, error_kind, error, worker, discarded, at)
    VALUES (v_step.run_id, v_step.id, v_step.node, v_step.attempt, p_error_kind, p_error, v_step.lease_owner,
            false, v_now);
    IF v_delay <= interval '0' THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;
    RETURN 'available';
END
$$;

CREATE OR REPLACE FUNCTION cyclone.fail(
    p_step_id bigint,
    p_worker text,
    p_lease_generation bigint,
    p_error text,
    p_error_kind text DEFAULT 'error',
    p_retry_in interval DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_run_id uuid;
BEGIN
    PERFORM cyclone._require_given('fail', p_step_id IS NOT NULL AND p_worker IS NOT NULL
                             AND p_lease_generation IS NOT NULL AND p_error IS NOT NULL,
                             'p_step_id, p_worker, p_lease_generation and p_error are required');
    PERFORM cyclone._require('fail', p_error_kind IN ('error', 'panic', 'timeout', 'permanent'),
        format('p_error_kind must be error, panic, timeout or permanent, not %s', coalesce(p_error_kind, 'NULL')));
    PERFORM cyclone._require('fail', coalesce(p_retry_in >= interval '0', true), 'p_retry_in must not be negative');
    SELECT s.run_id INTO v_run_id FROM cyclone_steps s WHERE s.id = p_step_id;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    PERFORM cyclone._lock_run(v_run_id);
    PERFORM 1 FROM cyclone_steps
      WHERE id = p_step_id AND state = 'running' AND lease_owner = p_worker
        AND lease_generation = p_lease_generation
        FOR UPDATE;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    RETURN cyclone._fail_step(p_step_id, p_error, p_error_kind, p_retry_in);
END
$$;
COMMENT ON FUNCTION cyclone.fail(bigint, text, bigint, text, text, interval) IS
    'Report a failed execution. Returns available (retry scheduled), discarded, or NULL when the lease is no longer ours.';

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.fail(bigint, text, bigint, text, text, interval), cyclone.backoff(int)
    TO cyclone_worker, cyclone_admin;

ALTER TABLE cyclone.cyclone_steps DROP COLUMN failed_span;

COMMIT;
