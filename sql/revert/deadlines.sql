-- Revert cyclone:deadlines to its previous version: the deploy script it had before
-- (sql/deploy/deadlines@v0.20.0.sql), and a drop of each function the new version added.
BEGIN;

-- 0.21.0 changed _expire_waits' return type (SPEC 16): the previous one is made again below.
DROP FUNCTION IF EXISTS cyclone._expire_waits(integer);

-- sql/engine/28_deadlines.sql: change `deadlines` — a run's clocks (SPEC 7, 8):
-- enforce_deadlines() fails running runs past deadline_at; _expire_waits() discards
-- wait and child nodes past their max_wait. Both skip paused runs: their clocks stop
-- (resume moves both expiries forward by the pause, 29_operator.sql).
-- Owns enforce_deadlines (granted to cyclone_admin), _deadline_candidates,
-- _expire_deadline, _wait_candidates and _expire_waits.
-- Requires: 21_runs.sql (_lock_run, _root_run, _discard_steps), 22_advance.sql
-- (_end_run_and_notify, _discard_step), 03_checks.sql (_require), 10_runs_tables.sql,
-- 02_clock.sql. Called by tick() (31_tick.sql), which locks the candidates' runs
-- before its first phase.
-- Lock order: each run (after its ancestors; runs in root-run, then run-id order),
-- then its steps.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=deadlines NOTE="..."` (docs/architecture.md, Changing the engine).

-- The runs enforce_deadlines() fails: running past deadline_at, most overdue
-- first, at most p_limit. tick() also uses it to lock every run of its pass up
-- front.
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
REVOKE ALL ON FUNCTION cyclone._deadline_candidates(timestamp with time zone,integer) FROM PUBLIC;

-- Fails one running run at its deadline: its available, running and waiting
-- steps are discarded (kind deadline; a child node's child run is cancelled),
-- then the run fails through the same path as any failed run, which cancels
-- the rest of its live steps and tells its parent. The caller holds the run lock.
-- The cancel notice is sent here: the steps that were running are discarded, not
-- cancelled, so _end_run's _cancel_steps finds none running to announce.
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
REVOKE ALL ON FUNCTION cyclone._expire_deadline(uuid) FROM PUBLIC;

-- Fails every running run past its deadline (SPEC 7), at most p_limit a call, and
-- returns their ids: each discard carries error kind deadline and error 'run
-- deadline exceeded'. 22023 for a p_limit below 1 (22004 for NULL). Every candidate
-- run is locked first, in root-run then run-id order; then, most overdue first, each
-- is re-read under its lock (_lock_run again) and failed while it is still running
-- and past its deadline, so a paused or ended run is left alone.
CREATE OR REPLACE FUNCTION cyclone.enforce_deadlines(p_limit integer DEFAULT 100)
RETURNS SETOF uuid
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
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
REVOKE ALL ON FUNCTION cyclone.enforce_deadlines(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.enforce_deadlines(integer) TO cyclone_admin;

-- The wait and child nodes _expire_waits() discards: waiting past wait_expires_at
-- in running runs, longest expired first, at most p_limit. tick() also uses it to
-- lock every run of its pass up front. Unlike the other candidate functions it reads
-- through the parents (no ONLY), so its plan takes in the history day tables too;
-- no step there is waiting, so it returns live steps only.
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
REVOKE ALL ON FUNCTION cyclone._wait_candidates(timestamp with time zone,integer) FROM PUBLIC;

-- Discards wait and child nodes of running runs that waited past max_wait (error
-- kind max_wait; the failure policy applies, and a child node's child run is
-- cancelled), at most p_limit a call, and returns their ids. Each run is locked in
-- root-run, then run-id order; a run that is no longer running (paused, or ended) is
-- skipped, and the step is re-matched under the lock (still waiting, still expired).
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
REVOKE ALL ON FUNCTION cyclone._expire_waits(integer) FROM PUBLIC;

COMMIT;
