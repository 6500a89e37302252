-- Revert cyclone:fail to its previous version: the deploy script it had before
-- (sql/deploy/fail@v0.18.0.sql), and a drop of each function the new version added.
BEGIN;

-- sql/engine/26_fail.sql: change `fail` — a failed execution (SPEC 6): the step
-- returns to available after a delay (the caller's p_retry_in, or the jittered
-- exponential backoff()) while attempts remain, else it is discarded and the DAG's
-- failure policy applies. fail() is a compare-and-set like complete(); the sweep's
-- timeouts take the same transition (_fail_step). fail() also keeps the failed
-- execution's span in cyclone_steps.failed_span (SPEC 14; the column has no CHECK:
-- only fail() puts a value there, and checks it first).
-- Owns backoff and fail (granted to cyclone_worker and cyclone_admin) and _fail_step.
-- Requires: 21_runs.sql (_lock_run), 22_advance.sql (_discard_step), 40_wakeups.sql
-- (_wake), 39_traces.sql (_traceparent_problem), 03_checks.sql (_require,
-- _require_given, _shown), 10_runs_tables.sql (cyclone_steps, cyclone_step_errors),
-- 02_clock.sql. Called by workers (fail, backoff) and 27_sweep.sql (_fail_step).
-- Lock order: the run (after its ancestors), then its step.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=fail NOTE="..."` (docs/architecture.md, Changing the engine).

-- The default retry delay (SPEC 6): d = least(1 hour, 2^(p_attempt-1) seconds),
-- uniform in [d/2, d]: attempt 1 waits 0.5 to 1 s; from attempt 13 on, d is the
-- one-hour cap. NULL: 22004. The jitter is computed here, in SQL, for every worker
-- alike; a worker may also ask for it (cyclone_py's Client.backoff). Volatile: random().
CREATE OR REPLACE FUNCTION cyclone.backoff(p_attempt integer)
RETURNS interval
LANGUAGE plpgsql
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
COMMENT ON FUNCTION cyclone.backoff(integer) IS 'Default retry delay: d = least(1 hour, 2^(attempt-1) s), uniform in [d/2, d].';
REVOKE ALL ON FUNCTION cyclone.backoff(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.backoff(integer) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.backoff(integer) TO cyclone_admin;

-- The failed-execution transition, shared by fail() and the sweep's timeouts.
-- The caller holds the run lock and has matched the running step. A permanent
-- error, or a failure of the last attempt (attempt >= max_attempts), discards the
-- step (_discard_step, with the failure policy) and returns 'discarded'. Otherwise
-- the step is available again at now + (p_retry_in, or backoff(attempt)), its lease
-- cleared, the error on the step, and returns 'available'; a retry due at once wakes
-- workers (_wake: only while one waits). The error is kept in cyclone_step_errors
-- (a discard's by _discard_steps). A retry clears failed_span (fail() then stores
-- its own).
CREATE OR REPLACE FUNCTION cyclone._fail_step(
    p_step_id bigint,
    p_error text,
    p_error_kind text,
    p_retry_in interval)
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
REVOKE ALL ON FUNCTION cyclone._fail_step(bigint,text,text,interval) FROM PUBLIC;

-- Reports a failed execution (SPEC 6): like complete(), it acts only on a step still
-- running under (p_worker, p_lease_generation), through _fail_step. Returns the new
-- state, 'available' (a retry scheduled) or 'discarded', or NULL when the lease is
-- no longer the caller's (or the step is unknown or archived). 22004 for a missing
-- step, worker, generation, error or error kind; 22023 for an error kind other than
-- error, panic, timeout and permanent (shown cut to 40 characters, as every refusal
-- shows a value), a negative p_retry_in or a malformed p_span. The run is locked
-- (_lock_run, ancestors first), then the step (FOR UPDATE), whose lease is checked
-- under the lock.
-- p_span, the failed execution's span as a W3C traceparent, is kept in failed_span:
-- the next claim returns it as previous_span, for the new execution's span link
-- (SPEC 14), after a retry or after an operator's retry of the discard. A retry the
-- engine schedules itself (a timeout the sweep finds) keeps none, and a reclaim
-- leaves the kept one: an execution that never reported its failure is linked from
-- nothing. p_span is the last parameter and there is no six-argument form, so calls
-- with four to six arguments resolve to this one function.
-- plan_cache_mode = force_generic_plan, as on the whole hot path (submit, claim,
-- renew, complete, complete_many, fail): its statements have good generic plans, and
-- planning them again on every call cost more than executing them.
CREATE OR REPLACE FUNCTION cyclone.fail(
    p_step_id bigint,
    p_worker text,
    p_lease_generation bigint,
    p_error text,
    p_error_kind text DEFAULT 'error'::text,
    p_retry_in interval DEFAULT NULL::interval,
    p_span text DEFAULT NULL::text)
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
REVOKE ALL ON FUNCTION cyclone.fail(bigint,text,bigint,text,text,interval,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.fail(bigint,text,bigint,text,text,interval,text) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.fail(bigint,text,bigint,text,text,interval,text) TO cyclone_admin;

COMMIT;
