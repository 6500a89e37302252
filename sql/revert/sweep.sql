-- Revert cyclone:sweep to its previous version: the deploy script it had before
-- (sql/deploy/sweep@v0.23.0.sql), and a drop of each function the new version added.
BEGIN;

-- sql/engine/27_sweep.sql: change `sweep` — recovery of running steps (SPEC 7). A step
-- past its timeout is a failed execution (kind timeout, backoff, attempt charged)
-- whether or not its lease expired; a step whose lease expired is reclaimed: claimable
-- again at once with the same attempt number, or discarded as reclaim_limit past the
-- limit. Steps of paused runs too: a crashed worker's lease expires whatever the run's
-- state. Owns sweep (granted to cyclone_admin) and _sweep_candidates.
-- Requires: 21_runs.sql (_lock_run, _root_run), 26_fail.sql (_fail_step),
-- 22_advance.sql (_discard_step), 03_checks.sql (_require), 10_runs_tables.sql,
-- 02_clock.sql. Called by tick() (31_tick.sql), which locks the candidates' runs
-- before its first phase.
-- Lock order: candidates are read unlocked, then each run is locked (in root-run,
-- then run-id order) and its step re-matched on its lease generation.
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=sweep NOTE="..."` (docs/architecture.md, Changing the engine).

-- The steps sweep() acts on: running past their lease or their timeout, oldest
-- (lowest id) first, at most p_limit. tick() also uses it to lock every run of its
-- pass up front. A timeout counts as at most 366 days, the most define_workflow
-- accepts: one stored by an older release beyond PostgreSQL's range of times would
-- otherwise make started_at + timeout fail (22008), and every tick with it.
CREATE OR REPLACE FUNCTION cyclone._sweep_candidates(p_now timestamp with time zone, p_limit integer)
RETURNS TABLE(id bigint, run_id uuid, lease_generation bigint)
LANGUAGE sql
STABLE
AS $$
    SELECT s.id, s.run_id, s.lease_generation
      FROM ONLY cyclone.cyclone_steps s
     WHERE s.state = 'running'
       AND (s.lease_expiry < p_now OR s.started_at + least(s.timeout, interval '366 days') < p_now)
     ORDER BY s.id
     LIMIT p_limit
$$;
REVOKE ALL ON FUNCTION cyclone._sweep_candidates(timestamp with time zone,integer) FROM PUBLIC;

-- Recovers up to p_limit running steps and returns one row per step acted on,
-- action 'retried' or 'discarded' for a timeout (_fail_step, kind timeout), and
-- 'reclaimed' or 'discarded' (reclaim_limit) for an expired lease. A reclaim is
-- not a failure: the step is available again with scheduled_at unchanged,
-- reclaims + 1 and rerun_attempt set, so the next claim runs the same attempt
-- number; its failed_span stays. With p_max_reclaims = n > 0, a lease that expires
-- after n reclaims discards the step instead (no attempt charged); 0 reclaims
-- without bound. 22023 for a negative p_max_reclaims or a p_limit below 1 (22004
-- for NULL). Each candidate is re-read under the lock: one that moved on (completed,
-- failed, claimed again at a new generation) is skipped, and one renewed in time is
-- left alone, as neither test holds any more. A timeout counts as at most 366 days
-- (see _sweep_candidates). A reclaim notifies cyclone_wakeup
-- whether or not a worker waits: a rare path, unlike the hot ones that go through
-- _wake.
CREATE OR REPLACE FUNCTION cyclone.sweep(p_max_reclaims integer DEFAULT 0, p_limit integer DEFAULT 100)
RETURNS TABLE(step_id bigint, run_id uuid, node text, action text)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := cyclone.now();
    v_candidate record;
    v_step cyclone.cyclone_steps;
BEGIN
    PERFORM cyclone._require('sweep', p_max_reclaims >= 0, 'p_max_reclaims must be 0 (unbounded) or positive');
    PERFORM cyclone._require('sweep', p_limit > 0, 'p_limit must be positive');
    FOR v_candidate IN
        SELECT c.id, c.run_id, c.lease_generation
          FROM cyclone._sweep_candidates(v_now, p_limit) c
         ORDER BY cyclone._root_run(c.run_id), c.run_id, c.id
    LOOP
        PERFORM cyclone._lock_run(v_candidate.run_id);
        SELECT s.* INTO v_step FROM ONLY cyclone_steps s
         WHERE s.id = v_candidate.id AND s.state = 'running'
           AND s.lease_generation = v_candidate.lease_generation
           FOR UPDATE;
        CONTINUE WHEN NOT FOUND;

        IF v_step.started_at + least(v_step.timeout, interval '366 days') < v_now THEN
            step_id := v_step.id; run_id := v_step.run_id; node := v_step.node;
            action := CASE cyclone._fail_step(v_step.id, format('step timed out after %s', v_step.timeout),
                                              'timeout', NULL)
                      WHEN 'available' THEN 'retried' ELSE 'discarded' END;
            RETURN NEXT;
        ELSIF v_step.lease_expiry < v_now THEN
            step_id := v_step.id; run_id := v_step.run_id; node := v_step.node;
            IF p_max_reclaims > 0 AND v_step.reclaims >= p_max_reclaims THEN
                PERFORM cyclone._discard_step(v_step.id,
                    format('lease expired again after %s reclaims (max reclaims %s)', v_step.reclaims, p_max_reclaims),
                    'reclaim_limit');
                action := 'discarded';
            ELSE
                UPDATE ONLY cyclone_steps
                   SET state = 'available', lease_owner = NULL, lease_expiry = NULL,
                       reclaims = reclaims + 1, rerun_attempt = true
                 WHERE id = v_step.id;
                PERFORM pg_notify('cyclone_wakeup', '');
                action := 'reclaimed';
            END IF;
            RETURN NEXT;
        END IF;
    END LOOP;
END
$$;
COMMENT ON FUNCTION cyclone.sweep(integer,integer) IS 'Recover running steps: timeouts (retried/discarded) and expired leases (reclaimed, or discarded as reclaim_limit once p_max_reclaims > 0 reclaims are spent). At most p_limit steps a call.';
REVOKE ALL ON FUNCTION cyclone.sweep(integer,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.sweep(integer,integer) TO cyclone_admin;

COMMIT;
