-- Deploy cyclone:snooze_progress
-- requires: tables dynamic_columns checks clock runs wakeups
-- A complete copy of sql/engine/45_snooze_progress.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/45_snooze_progress.sql: change `snooze_progress` — what a handler may tell the engine while its
-- step runs, besides its result (SPEC 16): snooze() hands the step back to be run later without charging an
-- attempt; progress() keeps the latest progress value and announces it.
-- Owns: snooze, progress.
-- Requires: 10_runs_tables.sql (cyclone_steps and its columns snoozes, progress, progress_at: the change
-- dynamic_columns), 03_checks.sql (_require_given, _payload_problem, _check_payload), 02_clock.sql (now),
-- 21_runs.sql (_lock_run), 40_wakeups.sql (_wake). Reads and writes the live tables only (ONLY).
-- Called by: a worker (cyclone_worker) or cyclone_admin, with the lease claim gave it.
-- Lock order: snooze locks the run (_lock_run: ancestors first), then the step, as complete and release do;
-- progress locks only the one step it updates, as renew does.
-- Both are the compare-and-set of complete: the step must be running under (p_worker, p_lease_generation) and
-- within its timeout (started_at + timeout > now; a timeout counts as at most 366 days, as in renew), so a
-- report of a lost or timed-out execution changes nothing and answers false (SPEC 18).
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=snooze_progress NOTE="..."` (docs/architecture.md, Changing the engine).

-- snooze: "not now, try again in p_delay", for a handler that finds what it needs is not ready (River's
-- snooze). On a match the step is available again with scheduled_at = now + p_delay and its lease cleared;
-- the attempt is not charged (rerun_attempt: the next claim runs the same attempt number, as after a release
-- or a reclaim), reclaims is unchanged, and snoozes grows by one. Its limit slots go back through the release
-- trigger (35_limits.sql); a zero delay wakes waiting workers (_wake), as the step is due at once.
-- A snooze is not a failure: no error is recorded and the backoff does not apply. Nothing bounds how often a
-- step snoozes; a run deadline (SPEC 7) still ends it, and cyclone_v_steps.snoozes shows the count.
-- Guards: 22004 for a missing argument; 22023 for p_delay below zero or over 365 days (a longer wait is a
-- schedule, not a snooze), before any lock. False, and no change, when the lease is no longer the caller's,
-- the timeout has passed, or the step is unknown or its run archived.
CREATE OR REPLACE FUNCTION cyclone.snooze(
    p_step_id bigint,
    p_worker text,
    p_lease_generation bigint,
    p_delay interval)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_run_id uuid;
BEGIN
    PERFORM cyclone._require_given('snooze', p_step_id IS NOT NULL AND p_worker IS NOT NULL
                             AND p_lease_generation IS NOT NULL AND p_delay IS NOT NULL,
                             'p_step_id, p_worker, p_lease_generation and p_delay are required');
    IF p_delay < interval '0' OR p_delay > interval '365 days' THEN
        RAISE EXCEPTION 'snooze: p_delay must be between 0 and 365 days (got %)', p_delay USING ERRCODE = '22023';
    END IF;
    SELECT s.run_id INTO v_run_id FROM ONLY cyclone_steps s WHERE s.id = p_step_id;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM cyclone._lock_run(v_run_id);
    UPDATE ONLY cyclone_steps
       SET state = 'available', scheduled_at = v_now + p_delay, lease_owner = NULL, lease_expiry = NULL,
           rerun_attempt = true, snoozes = snoozes + 1
     WHERE id = p_step_id
       AND state = 'running'
       AND lease_owner = p_worker
       AND lease_generation = p_lease_generation
       AND (timeout IS NULL OR started_at + least(timeout, interval '366 days') > v_now);
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF p_delay = interval '0' THEN
        PERFORM cyclone._wake();
    END IF;
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.snooze(bigint,text,bigint,interval) IS 'Hand a leased step back to be claimed again after p_delay (0 to 365 days): no attempt charged, reclaims unchanged, snoozes + 1. False when the lease is no longer the caller''s or its timeout passed.';
REVOKE ALL ON FUNCTION cyclone.snooze(bigint,text,bigint,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.snooze(bigint,text,bigint,interval) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.snooze(bigint,text,bigint,interval) TO cyclone_admin;

-- progress: keeps p_progress, the latest progress of a running step (any JSON value: a number, a fraction,
-- {"done": 40, "total": 100}), and progress_at = now, then sends NOTIFY cyclone_progress with payload
-- {"run_id": ..., "step_id": ...} so that a reader (the console's run page) can fetch it. The value stays on
-- the step after it ends. Latest wins: the worker sends at most a few calls a second and always its last
-- value (cyclone_py's worker rate-limits ctx.progress), and nothing keeps the history.
-- Guards: 22004 for a missing step, worker or generation (a NULL p_progress clears the value); 22023 for a
-- value over 64 KiB (its jsonb size) or one _payload_problem refuses (nested deeper than 100 levels), before
-- any lock. False, and no change, when the lease is no longer the caller's, the timeout has passed, or the step
-- is unknown or its run archived.
-- Commits without waiting for the WAL flush, as renew: a progress value lost in a crash is replaced by the
-- next one, and a tight loop of reports must not queue behind the disk.
CREATE OR REPLACE FUNCTION cyclone.progress(
    p_step_id bigint,
    p_worker text,
    p_lease_generation bigint,
    p_progress jsonb)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_run_id uuid;
BEGIN
    PERFORM cyclone._require_given('progress', p_step_id IS NOT NULL AND p_worker IS NOT NULL
                             AND p_lease_generation IS NOT NULL,
                             'p_step_id, p_worker and p_lease_generation are required');
    IF pg_column_size(p_progress) > 65536 THEN
        RAISE EXCEPTION 'progress: p_progress is % bytes; the limit is 65536 bytes (64 KiB)',
            pg_column_size(p_progress) USING ERRCODE = '22023';
    END IF;
    IF cyclone._payload_problem(p_progress) IS NOT NULL THEN
        PERFORM cyclone._check_payload('progress: p_progress', p_progress);
    END IF;
    PERFORM set_config('synchronous_commit', 'off', true);
    UPDATE ONLY cyclone_steps
       SET progress = p_progress, progress_at = v_now
     WHERE id = p_step_id
       AND state = 'running'
       AND lease_owner = p_worker
       AND lease_generation = p_lease_generation
       AND (timeout IS NULL OR started_at + least(timeout, interval '366 days') > v_now)
    RETURNING run_id INTO v_run_id;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM pg_notify('cyclone_progress', json_build_object('run_id', v_run_id, 'step_id', p_step_id)::text);
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.progress(bigint,text,bigint,jsonb) IS 'Keep the latest progress (a JSON value up to 64 KiB) of a leased step, with progress_at, and NOTIFY cyclone_progress {run_id, step_id}. False when the lease is no longer the caller''s or its timeout passed.';
REVOKE ALL ON FUNCTION cyclone.progress(bigint,text,bigint,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.progress(bigint,text,bigint,jsonb) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.progress(bigint,text,bigint,jsonb) TO cyclone_admin;

COMMIT;
