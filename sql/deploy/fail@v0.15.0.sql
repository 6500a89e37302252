-- Deploy cyclone:fail
-- requires: fail@v0.13.0 advance runs checks clock step_errors traces wakeups
-- Reworked after v0.13.0 (fail@v0.12.0.sql and fail@v0.13.0.sql have the
-- rest of the change, which stays): fail shows a bad p_error_kind cut to 40
-- characters, as every refusal shows a value. Only fail() changes.
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.fail(
    p_step_id bigint,
    p_worker text,
    p_lease_generation bigint,
    p_error text,
    p_error_kind text DEFAULT 'error',
    p_retry_in interval DEFAULT NULL,
    p_span text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET plan_cache_mode = force_generic_plan
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
    v_state := cyclone._fail_step(p_step_id, p_error, p_error_kind, p_retry_in);
    -- The span, for the next attempt's link: one more write only when there
    -- is one to keep (a retry has just cleared the old one), or on a discard
    -- (whose statement did not).
    IF p_span IS NOT NULL OR v_state = 'discarded' THEN
        UPDATE cyclone_steps SET failed_span = p_span WHERE id = p_step_id;
    END IF;
    RETURN v_state;
END
$$;

COMMIT;
