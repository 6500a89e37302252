-- Revert cyclone:fail (back to its v0.12.0 deploy: _fail_step notifies on
-- every retry due at once)
BEGIN;

-- The failed-execution transition, shared by fail() and the sweep's timeouts.
-- The caller holds the run lock and has matched the running step. The error is
-- kept in cyclone_step_errors (a discard's by _discard_steps). A retry clears
-- failed_span (fail() then stores its own).
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
           lease_owner = NULL, lease_expiry = NULL, failed_span = NULL
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

COMMIT;
