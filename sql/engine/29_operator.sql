-- sql/engine/29_operator.sql: change `operator` — what an operator does to a run (SPEC section 9).
-- Owns: cancel, pause, resume (a run's life and its clocks); retry and retry_all, which reopen dead letters
-- through _reopen. Each action is recorded in cyclone_audit (at, run, node, action, reason; the actor is the
-- column's default, 04_audit.sql).
-- Requires: 10_runs_tables.sql (cyclone_runs, cyclone_steps, cyclone_audit), 13_history_tables.sql
-- (cyclone_archive_queue), 21_runs.sql (_lock_existing_run), 22_advance.sql (_advance,
-- _end_run_and_notify), 43_history.sql (_revive), 03_checks.sql (_require, _require_given, _shown),
-- 02_clock.sql (now).
-- Called by: cyclone_admin (the CLI's retry, retry-all, cancel, pause and resume, the console's actions; on a
-- router, the run's shard); _fire_schedules (34_schedules.sql) calls cancel for overlap cancel_other.
-- Lock order: the run row, after its ancestors root first (_lock_existing_run), then its steps. Every
-- function here locks its run before it reads or writes a step. The run is read and written in the live
-- tables only (ONLY): an archived run is finished, so cancel, pause and resume answer false for it, and
-- retry and retry_all bring it back into the live tables (_revive) under the lock they already hold.
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=operator NOTE="..."` (docs/architecture.md, Changing the engine).

-- cancel: ends a running or paused run as cancelled. _end_run_and_notify cancels every live step (running
-- handlers are told on channel cyclone_cancel, payload the run id, and their renew returns false), cancels
-- the child runs, queues the run for archive() and, for a child run, tells its parent (the parent's node is
-- discarded as child_failed). False, with nothing written, when the run is already over (archived included);
-- P0002 for an unknown run, 22004 for a NULL id. The audit row carries p_reason.
CREATE OR REPLACE FUNCTION cyclone.cancel(p_run_id uuid, p_reason text DEFAULT NULL::text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_run cyclone.cyclone_runs;
BEGIN
    v_run := cyclone._lock_existing_run('cancel', p_run_id);
    IF v_run.state NOT IN ('running', 'paused') THEN
        RETURN false;
    END IF;
    INSERT INTO cyclone_audit (at, run_id, action, reason) VALUES (cyclone.now(), p_run_id, 'cancel', p_reason);
    RETURN cyclone._end_run_and_notify(p_run_id, 'cancelled', 'run cancelled');
END
$$;
COMMENT ON FUNCTION cyclone.cancel(uuid,text) IS 'Cancel a running or paused run, its live steps and its child runs; running handlers are told on channel cyclone_cancel. False when the run is already over.';
REVOKE ALL ON FUNCTION cyclone.cancel(uuid,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.cancel(uuid,text) TO cyclone_admin;

-- pause: a running run stops being claimed (claim takes steps of running runs only); executions in flight
-- may finish and their results count. paused_at records when, so that resume can move the run's deadline
-- and its max_wait expiries forward by the pause: those clocks do not run while paused. False unless the run
-- is running.
CREATE OR REPLACE FUNCTION cyclone.pause(p_run_id uuid)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_run cyclone.cyclone_runs;
    v_now timestamptz := cyclone.now();
BEGIN
    v_run := cyclone._lock_existing_run('pause', p_run_id);
    IF v_run.state <> 'running' THEN
        RETURN false;
    END IF;
    UPDATE ONLY cyclone_runs SET state = 'paused', paused_at = v_now WHERE id = p_run_id;
    INSERT INTO cyclone_audit (at, run_id, action) VALUES (v_now, p_run_id, 'pause');
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.pause(uuid) IS 'Stop claims for a running run; its deadline and max_wait clocks stop too. False unless running.';
REVOKE ALL ON FUNCTION cyclone.pause(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.pause(uuid) TO cyclone_admin;

-- resume: a paused run runs again. deadline_at moves forward by the length of the pause; a waiting node's
-- max_wait expiry moves forward by the part of the pause it spent waiting. Wakes workers itself when the run
-- has a step due now (NOTIFY cyclone_wakeup, always: an operator action is rare, so it does not ask _wake
-- whether a worker waits). False unless the run is paused.
CREATE OR REPLACE FUNCTION cyclone.resume(p_run_id uuid)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_run cyclone.cyclone_runs;
    v_now timestamptz := cyclone.now();
    v_paused interval;
BEGIN
    v_run := cyclone._lock_existing_run('resume', p_run_id);
    IF v_run.state <> 'paused' THEN
        RETURN false;
    END IF;
    v_paused := greatest(v_now - v_run.paused_at, interval '0');
    UPDATE ONLY cyclone_runs
       SET state = 'running', paused_at = NULL, deadline_at = deadline_at + v_paused
     WHERE id = p_run_id;
    -- A node reached during the pause (started_at after paused_at) has waited
    -- only since it was reached: it gets its full max_wait from now. A sleep's
    -- wake time moves the same way (SPEC 16: a pause freezes a sleep), and its
    -- scheduled_at with it.
    UPDATE ONLY cyclone_steps
       SET wait_expires_at = wait_expires_at + greatest(v_now - greatest(v_run.paused_at, started_at), interval '0'),
           scheduled_at = CASE WHEN kind = 'sleep'
               THEN scheduled_at + greatest(v_now - greatest(v_run.paused_at, started_at), interval '0')
               ELSE scheduled_at END
     WHERE run_id = p_run_id AND state = 'waiting' AND wait_expires_at IS NOT NULL;
    INSERT INTO cyclone_audit (at, run_id, action) VALUES (v_now, p_run_id, 'resume');
    IF EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                WHERE s.run_id = p_run_id AND s.state = 'available' AND s.scheduled_at <= v_now) THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.resume(uuid) IS 'Resume a paused run; its deadline, max_wait expiries and sleeps'' wake times move forward by the pause. False unless paused.';
REVOKE ALL ON FUNCTION cyclone.resume(uuid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.resume(uuid) TO cyclone_admin;

-- _reopen: the work shared by retry and retry_all, on a run the caller has locked (and revived when it was
-- archived). Reopens the given steps that are discarded: back to pending, with max_attempts raised to at
-- least attempt + p_additional_attempts, reclaims reset and error, output, child run and max_wait expiry
-- cleared; one 'retry' audit row each. A run that had failed or completed goes back to running: it leaves
-- cyclone_archive_queue (it is no longer finished), and a deadline that has already passed is cleared (the
-- operator takes over). Then the steps that the failure, or a contained branch, cancelled come back to
-- pending, in dependency order, unless a dependency is still discarded or cancelled; _advance reaches every
-- pending step whose dependencies are complete. A map node (SPEC 16) that had items goes back to waiting
-- with its discarded and cancelled items available again (its completed items keep their outputs); one
-- whose list was never read (a bad_input) is reached again like any pending node. A cancelled run cannot be retried (55000). Returns how many
-- steps it reopened (0: nothing changed, and the run is not touched).
CREATE OR REPLACE FUNCTION cyclone._reopen(
    p_run cyclone.cyclone_runs,
    p_step_ids bigint[],
    p_additional_attempts integer,
    p_reason text)
RETURNS integer
LANGUAGE plpgsql
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_count int;
BEGIN
    IF p_run.state = 'cancelled' THEN
        RAISE EXCEPTION 'run % is cancelled; its steps cannot be retried', p_run.id USING ERRCODE = '55000';
    END IF;
    WITH reopened AS (
        UPDATE ONLY cyclone_steps
           SET state = 'pending', max_attempts = greatest(max_attempts, attempt + p_additional_attempts),
               reclaims = 0, rerun_attempt = false, error = NULL, error_kind = NULL, output = NULL,
               finished_at = NULL, contained = false, child_run_id = NULL, wait_expires_at = NULL,
               scheduled_at = v_now
         WHERE run_id = p_run.id AND item_index IS NULL AND state = 'discarded' AND id = ANY (p_step_ids)
        RETURNING id, node, kind, max_attempts
    ), maps AS (
        -- A map node (SPEC 16) goes back to waiting, not pending: it keeps its list. Its discarded and
        -- cancelled items are available again, each with at least p_additional_attempts more; completed
        -- items keep their outputs. A map with no item to reopen ends below (_end_map).
        UPDATE ONLY cyclone_steps i
           SET state = 'available', max_attempts = greatest(i.max_attempts, i.attempt + p_additional_attempts),
               reclaims = 0, rerun_attempt = false, error = NULL, error_kind = NULL, output = NULL,
               finished_at = NULL, contained = false, scheduled_at = v_now
          FROM reopened r
         WHERE r.kind = 'map' AND i.run_id = p_run.id AND i.node = r.node AND i.item_index IS NOT NULL
           AND i.state IN ('discarded', 'cancelled')
        RETURNING i.id
    ), audited AS (
        INSERT INTO cyclone_audit (at, run_id, node, action, reason)
        SELECT v_now, p_run.id, r.node, 'retry', p_reason FROM reopened r
        RETURNING 1
    )
    SELECT count(*) INTO v_count FROM audited;
    IF v_count = 0 THEN
        RETURN 0;
    END IF;
    UPDATE ONLY cyclone_steps m SET state = 'waiting', started_at = v_now
     WHERE m.run_id = p_run.id AND m.id = ANY (p_step_ids) AND m.kind = 'map' AND m.state = 'pending'
       AND EXISTS (SELECT 1 FROM ONLY cyclone_steps i
                    WHERE i.run_id = p_run.id AND i.node = m.node AND i.item_index IS NOT NULL);
    PERFORM cyclone._end_map(m.id) FROM ONLY cyclone_steps m
     WHERE m.run_id = p_run.id AND m.id = ANY (p_step_ids) AND m.kind = 'map' AND m.state = 'waiting';
    IF EXISTS (SELECT 1 FROM ONLY cyclone_steps i
                WHERE i.run_id = p_run.id AND i.item_index IS NOT NULL AND i.state = 'available') THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;

    IF p_run.state IN ('failed', 'completed') THEN
        -- An operator retry takes over from a deadline that has already passed.
        UPDATE ONLY cyclone_runs
           SET state = 'running', finished_at = NULL, output = NULL,
               deadline_at = CASE WHEN deadline_at <= v_now THEN NULL ELSE deadline_at END
         WHERE id = p_run.id;
        DELETE FROM cyclone_archive_queue q WHERE q.run_id = p_run.id;
    END IF;

    -- Steps cancelled by the failure (or by a contained branch) come back, in
    -- dependency order, unless a dependency is still discarded or cancelled. A
    -- reopened step is due now when reached (scheduled_at: the advance makes a task
    -- due at the later of it and the time it is reached), not at a backoff it had.
    -- A map that had made its items before it was cancelled (SPEC 16) comes back waiting, not pending: it
    -- keeps its list (reached again, it would make its items a second time), and its cancelled items are
    -- available again below; its completed and collected ones keep their ends.
    LOOP
        UPDATE ONLY cyclone_steps s
           SET state = CASE WHEN s.kind = 'map' AND EXISTS (SELECT 1 FROM ONLY cyclone_steps i
                                                            WHERE i.run_id = p_run.id AND i.node = s.node
                                                              AND i.item_index IS NOT NULL)
                            THEN 'waiting' ELSE 'pending' END,
               error = NULL, error_kind = NULL, finished_at = NULL,
               child_run_id = NULL, wait_expires_at = NULL, scheduled_at = v_now
         WHERE s.run_id = p_run.id AND s.item_index IS NULL AND s.state = 'cancelled'
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps d
                            WHERE d.run_id = p_run.id AND d.item_index IS NULL AND d.node = ANY (s.deps)
                              AND d.state IN ('discarded', 'cancelled'));
        EXIT WHEN NOT FOUND;
    END LOOP;
    UPDATE ONLY cyclone_steps i
       SET state = 'available', reclaims = 0, rerun_attempt = false, error = NULL, error_kind = NULL,
           finished_at = NULL, contained = false, scheduled_at = v_now
      FROM ONLY cyclone_steps m
     WHERE m.run_id = p_run.id AND m.item_index IS NULL AND m.kind = 'map' AND m.state = 'waiting'
       AND i.run_id = p_run.id AND i.node = m.node AND i.item_index IS NOT NULL AND i.state = 'cancelled';
    IF FOUND THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;

    PERFORM cyclone._advance(p_run.id);
    RETURN v_count;
END
$$;
REVOKE ALL ON FUNCTION cyclone._reopen(cyclone.cyclone_runs,bigint[],integer,text) FROM PUBLIC;

-- retry: reopens one discarded step, by node name (SPEC 9). Guards: p_node and p_additional_attempts are
-- required (22004); p_additional_attempts is 0 to 1,000,000 (22023: a value near 2^31 would overflow
-- max_attempts); P0002 for an unknown run or node (the node shown cut to 40 characters, as every refusal
-- shows a value); 55000 when the step is not discarded, or the run was cancelled. The run is locked first,
-- then brought back from its history day if archived (retry must find its steps in the live table, and an
-- archive() moving the run meanwhile would hide them), then the step is locked.
CREATE OR REPLACE FUNCTION cyclone.retry(
    p_run_id uuid,
    p_node text,
    p_additional_attempts integer DEFAULT 0,
    p_reason text DEFAULT NULL::text)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_run cyclone.cyclone_runs;
    v_step cyclone.cyclone_steps;
BEGIN
    PERFORM cyclone._require_given('retry', p_node IS NOT NULL AND p_additional_attempts IS NOT NULL,
                             'p_node and p_additional_attempts are required');
    PERFORM cyclone._require('retry', p_additional_attempts >= 0, 'p_additional_attempts must not be negative');
    PERFORM cyclone._require('retry', p_additional_attempts <= 1000000,
                             format('p_additional_attempts must be at most 1000000, got %s', p_additional_attempts));
    v_run := cyclone._lock_existing_run('retry', p_run_id);
    -- Archived (its lock is the one just taken): back into the live tables first.
    PERFORM cyclone._revive(p_run_id);
    SELECT s.* INTO v_step FROM ONLY cyclone_steps s
     WHERE s.run_id = p_run_id AND s.item_index IS NULL AND s.node = p_node FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'node % of run % not found', cyclone._shown(p_node), p_run_id USING ERRCODE = 'P0002';
    END IF;
    IF v_step.state <> 'discarded' THEN
        RAISE EXCEPTION 'step % ("%") of run % is not discarded (state=%)', v_step.id, p_node, p_run_id, v_step.state
            USING ERRCODE = '55000';
    END IF;
    PERFORM cyclone._reopen(v_run, ARRAY[v_step.id], p_additional_attempts, p_reason);
END
$$;
COMMENT ON FUNCTION cyclone.retry(uuid,text,integer,text) IS 'Reopen a discarded step (SPEC section 9): max_attempts raised to at least attempt + additional, reclaims reset, the run back to running. Not discarded: 55000. Reason goes to cyclone_audit.';
REVOKE ALL ON FUNCTION cyclone.retry(uuid,text,integer,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.retry(uuid,text,integer,text) TO cyclone_admin;

-- retry_all: reopens every discarded step of the run at once (no extra attempts), under the same lock and
-- revival as retry. Returns how many (0 when none, and then nothing changes).
CREATE OR REPLACE FUNCTION cyclone.retry_all(p_run_id uuid, p_reason text DEFAULT NULL::text)
RETURNS integer
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_run cyclone.cyclone_runs;
    v_ids bigint[];
BEGIN
    v_run := cyclone._lock_existing_run('retry_all', p_run_id);
    -- Archived (its lock is the one just taken): back into the live tables first.
    PERFORM cyclone._revive(p_run_id);
    -- A run's own steps: a map's discarded items come back with their map (_reopen), never alone.
    SELECT array_agg(s.id ORDER BY s.id) INTO v_ids FROM ONLY cyclone_steps s
     WHERE s.run_id = p_run_id AND s.item_index IS NULL AND s.state = 'discarded';
    IF v_ids IS NULL THEN
        RETURN 0;
    END IF;
    RETURN cyclone._reopen(v_run, v_ids, 0, p_reason);
END
$$;
COMMENT ON FUNCTION cyclone.retry_all(uuid,text) IS 'retry() every discarded step of the run; returns how many (0 when none).';
REVOKE ALL ON FUNCTION cyclone.retry_all(uuid,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.retry_all(uuid,text) TO cyclone_admin;
