-- Revert cyclone:operator to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._reopen(p_run cyclone.cyclone_runs, p_step_ids bigint[], p_additional_attempts integer, p_reason text)
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
               finished_at = NULL, contained = false, child_run_id = NULL, wait_expires_at = NULL
         WHERE run_id = p_run.id AND state = 'discarded' AND id = ANY (p_step_ids)
        RETURNING node
    ), audited AS (
        INSERT INTO cyclone_audit (at, run_id, node, action, reason)
        SELECT v_now, p_run.id, r.node, 'retry', p_reason FROM reopened r
        RETURNING 1
    )
    SELECT count(*) INTO v_count FROM audited;
    IF v_count = 0 THEN
        RETURN 0;
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
    -- dependency order, unless a dependency is still discarded or cancelled.
    LOOP
        UPDATE ONLY cyclone_steps s
           SET state = 'pending', error = NULL, error_kind = NULL, finished_at = NULL,
               child_run_id = NULL, wait_expires_at = NULL
         WHERE s.run_id = p_run.id AND s.state = 'cancelled'
           AND NOT EXISTS (SELECT 1 FROM ONLY cyclone_steps d
                            WHERE d.run_id = p_run.id AND d.node = ANY (s.deps)
                              AND d.state IN ('discarded', 'cancelled'));
        EXIT WHEN NOT FOUND;
    END LOOP;

    PERFORM cyclone._advance(p_run.id);
    RETURN v_count;
END
$$;
COMMENT ON FUNCTION cyclone._reopen(cyclone.cyclone_runs,bigint[],integer,text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.cancel(p_run_id uuid, p_reason text DEFAULT NULL::text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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

CREATE OR REPLACE FUNCTION cyclone.pause(p_run_id uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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

CREATE OR REPLACE FUNCTION cyclone.resume(p_run_id uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
    -- only since it was reached: it gets its full max_wait from now.
    UPDATE ONLY cyclone_steps
       SET wait_expires_at = wait_expires_at + greatest(v_now - greatest(v_run.paused_at, started_at), interval '0')
     WHERE run_id = p_run_id AND state = 'waiting' AND wait_expires_at IS NOT NULL;
    INSERT INTO cyclone_audit (at, run_id, action) VALUES (v_now, p_run_id, 'resume');
    IF EXISTS (SELECT 1 FROM ONLY cyclone_steps s
                WHERE s.run_id = p_run_id AND s.state = 'available' AND s.scheduled_at <= v_now) THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.resume(uuid) IS 'Resume a paused run; its deadline and max_wait expiries move forward by the pause. False unless paused.';

CREATE OR REPLACE FUNCTION cyclone.retry(p_run_id uuid, p_node text, p_additional_attempts integer DEFAULT 0, p_reason text DEFAULT NULL::text)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
    SELECT s.* INTO v_step FROM ONLY cyclone_steps s WHERE s.run_id = p_run_id AND s.node = p_node FOR UPDATE;
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

CREATE OR REPLACE FUNCTION cyclone.retry_all(p_run_id uuid, p_reason text DEFAULT NULL::text)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
DECLARE
    v_run cyclone.cyclone_runs;
    v_ids bigint[];
BEGIN
    v_run := cyclone._lock_existing_run('retry_all', p_run_id);
    -- Archived (its lock is the one just taken): back into the live tables first.
    PERFORM cyclone._revive(p_run_id);
    SELECT array_agg(s.id ORDER BY s.id) INTO v_ids FROM ONLY cyclone_steps s
     WHERE s.run_id = p_run_id AND s.state = 'discarded';
    IF v_ids IS NULL THEN
        RETURN 0;
    END IF;
    RETURN cyclone._reopen(v_run, v_ids, 0, p_reason);
END
$$;
COMMENT ON FUNCTION cyclone.retry_all(uuid,text) IS 'retry() every discarded step of the run; returns how many (0 when none).';

COMMIT;
