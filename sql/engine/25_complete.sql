-- sql/engine/25_complete.sql: change `complete` — a worker's successful result (SPEC 6):
-- complete() and complete_many(), granted to cyclone_worker and cyclone_admin. Each is
-- a compare-and-set on (running, owner, lease generation), then the DAG advance in the
-- same transaction. A late result (after a reclaim, timeout, cancel or deadline)
-- matches nothing and changes nothing.
-- Requires: 21_runs.sql (_lock_run, _root_run), 22_advance.sql (_advance_runs),
-- 03_checks.sql (_require, _require_given, _payload_problem, _check_payload),
-- 10_runs_tables.sql, 02_clock.sql.
-- Lock order: the run (after its ancestors), then its steps; a batch's runs by root
-- run, then run id (21_runs.sql).
-- What complete_many reaches, in this order, all under the run locks it takes first:
--   1. _require_given, _require, _payload_problem and _check_payload (03_checks.sql):
--      the arguments, the outputs within the limits of any JSON the engine stores.
--   2. The runs: when one has a parent, _root_run (_ancestors) to order them and
--      _lock_run for each (21_runs.sql); else one SELECT ... FOR NO KEY UPDATE in
--      run-id order.
--   3. In a batch of 64 or more with a step of a workflow of one node, _complete_solo_runs (22_advance.sql):
--      the steps that are a whole run (one step, no parent, no limit) are completed and moved with their runs
--      to today's day tables in one statement (no trigger fires: the release trigger is on UPDATE, and these
--      take no slot), then _notify_awaiters.
--   4. One UPDATE of the other steps, locking those it matches. Its statement trigger
--      cyclone_steps_release_slots (_release_slots, 35_limits.sql) gives their limit
--      slots back: slot rows deleted, free ones inserted, a lowered concurrency's
--      debt paid under the bucket row's lock, held-back marks cleared (SKIP LOCKED),
--      and _wake (40_wakeups.sql) when a held-back step may now run.
--   5. _advance_runs (22_advance.sql) over the runs with a step completed: ready
--      tasks made available (_wake); a run with a ready wait or child node through
--      _advance, which consumes an early signal, starts a child run (_start_runs,
--      _create_runs, _insert_steps, which may create cyclone_buckets rows; on a shard
--      _new_run_partition, _run_id_on) or discards the node (_discard_step:
--      _discard_steps, then _on_discard: _cancel_steps and _finish_runs, or
--      _end_run_and_notify: _end_run, _cancel_steps, _notify_parent); then
--      _finish_runs, which completes or fails the finished runs (queued in
--      cyclone_archive_queue) and calls _notify_parent for each finished child run,
--      completing or discarding its node and advancing the parent, already locked.
-- complete() reaches the same from step 4 on, for one step. Both refuse a result
-- that arrives once the step's timeout has passed (SPEC 18; see complete).
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=complete NOTE="..."` (docs/architecture.md, Changing the engine).

-- Completes a leased step (SPEC 6): on a match of (running, p_worker,
-- p_lease_generation) the step is completed with p_output (the error of an earlier
-- failed attempt cleared, the lease released) and its run advances (_advance_runs).
-- A result that arrives once the step's timeout has passed (started_at + timeout <=
-- now; a timeout counts as at most 366 days, as in renew and the sweep) is refused,
-- as renew refuses the heartbeat (SPEC 18): the durable timeout holds at once, not
-- at the next sweep. One that arrives after the lease expired but before a sweep
-- reclaimed the step is still accepted: nobody else holds it.
-- False, and no change, when the lease is no longer the caller's, or the step is
-- unknown or its run archived. 22004 for a missing step, worker or generation: the
-- arguments are tested with one plain expression, and _require_given, which names
-- them, runs only when one is NULL. 22023, before any lock and with nothing written,
-- for an output over 1 MiB or nested deeper than 100 levels (_payload_problem,
-- 03_checks.sql), as for an input: the output is stored on the step, copied into the
-- run's output when the node is a leaf, and into each dependent's claim (deps), and
-- every reader decodes it. _payload_problem is inlined into the IF (about half a
-- microsecond for a small output); _check_payload, which names the argument, runs
-- only to raise. A NULL output is no output. The run and its parent are read in one
-- statement, unlocked (a run's parent never changes); a run without a parent, the
-- common case, is locked directly (FOR NO KEY UPDATE, as _lock_run would), a child
-- run through _lock_run (ancestors first). The step's row lock comes with its UPDATE.
-- plan_cache_mode = force_generic_plan, as on the whole hot path (submit, claim,
-- renew, complete, complete_many, fail): its statements have good generic plans, and
-- planning them again on every call cost more than executing them.
CREATE OR REPLACE FUNCTION cyclone.complete(
    p_step_id bigint,
    p_worker text,
    p_lease_generation bigint,
    p_output jsonb DEFAULT NULL::jsonb)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_run_id uuid;
    v_parent uuid;
BEGIN
    IF p_step_id IS NULL OR p_worker IS NULL OR p_lease_generation IS NULL THEN
        PERFORM cyclone._require_given('complete', p_step_id IS NOT NULL AND p_worker IS NOT NULL
                                 AND p_lease_generation IS NOT NULL, 'p_step_id, p_worker and p_lease_generation are required');
    END IF;
    IF cyclone._payload_problem(p_output) IS NOT NULL THEN
        PERFORM cyclone._check_payload('complete: p_output', p_output);
    END IF;
    SELECT r.id, r.parent_run_id INTO v_run_id, v_parent
      FROM ONLY cyclone_steps s JOIN ONLY cyclone_runs r ON r.id = s.run_id WHERE s.id = p_step_id;
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    IF v_parent IS NULL THEN  -- the common case: no ancestors to lock first
        PERFORM 1 FROM ONLY cyclone_runs r WHERE r.id = v_run_id FOR NO KEY UPDATE;
    ELSE
        PERFORM cyclone._lock_run(v_run_id);
    END IF;
    UPDATE ONLY cyclone_steps
       SET state = 'completed', output = p_output, finished_at = v_now,
           lease_owner = NULL, lease_expiry = NULL, error = NULL, error_kind = NULL
     WHERE id = p_step_id
       AND state = 'running'
       AND lease_owner = p_worker
       AND lease_generation = p_lease_generation
       AND (timeout IS NULL OR started_at + least(timeout, interval '366 days') > v_now);
    IF NOT FOUND THEN
        RETURN false;
    END IF;
    PERFORM cyclone._advance_runs(ARRAY[v_run_id]);
    RETURN true;
END
$$;
COMMENT ON FUNCTION cyclone.complete(bigint,text,bigint,jsonb) IS 'Complete a leased step and advance its run. False (and no change) when the lease is no longer ours.';
REVOKE ALL ON FUNCTION cyclone.complete(bigint,text,bigint,jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.complete(bigint,text,bigint,jsonb) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.complete(bigint,text,bigint,jsonb) TO cyclone_admin;

-- The batch form of complete (SPEC 6), what the worker's reporter sends: each
-- element is its own compare-and-set with complete's semantics (a stale one is
-- refused, the others accepted). Returns one row per element, in input order,
-- accepted or not. 22004 for a NULL worker or array; 22023 when the arrays differ
-- in length or lower bound (elements pair by position), hold a NULL id or
-- generation, or list an id twice, and for an output complete would refuse (over
-- 1 MiB, nested deeper than 100 levels: _payload_problem), the message naming the
-- first such element's position and step id. Then the whole batch is refused and
-- nothing is written: the caller sends the others again without it (and fails that
-- step), as for any refused argument. The outputs are checked by one query that
-- stops at the first bad one, before any lock. The runs of the listed steps are locked before
-- any step: when one has a parent, one at a time through _lock_run in order of
-- _root_run, then run id, so that two batches crossing parent and child runs
-- cannot deadlock; else all in one statement, in run-id order. Then, in a batch
-- of 64 or more, the runs of one step end straight into history
-- (_complete_solo_runs), one UPDATE completes the other matching steps and one
-- _advance_runs advances their runs.
-- plan_cache_mode = force_generic_plan: the hot path (see complete).
CREATE OR REPLACE FUNCTION cyclone.complete_many(
    p_worker text,
    p_step_ids bigint[],
    p_lease_generations bigint[],
    p_outputs jsonb[])
RETURNS TABLE(step_id bigint, accepted boolean)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    v_now timestamptz := cyclone.now();
    v_run_id uuid;
    v_runs uuid[];
    v_done bigint[] := '{}'::bigint[];
    v_solo bigint[];
    v_workflows text[];
    v_bad record;
BEGIN
    PERFORM cyclone._require_given('complete_many', p_worker IS NOT NULL AND p_step_ids IS NOT NULL
                             AND p_lease_generations IS NOT NULL AND p_outputs IS NOT NULL,
                             'p_worker and the three arrays are required');
    PERFORM cyclone._require('complete_many',
        cardinality(p_step_ids) = cardinality(p_lease_generations) AND cardinality(p_step_ids) = cardinality(p_outputs)
        AND array_lower(p_step_ids, 1) IS NOT DISTINCT FROM array_lower(p_lease_generations, 1)
        AND array_lower(p_step_ids, 1) IS NOT DISTINCT FROM array_lower(p_outputs, 1),
        'p_step_ids, p_lease_generations and p_outputs must have the same length and bounds');
    PERFORM cyclone._require('complete_many',
        array_position(p_step_ids, NULL) IS NULL AND array_position(p_lease_generations, NULL) IS NULL,
        'step ids and lease generations must not contain NULL');
    PERFORM cyclone._require('complete_many',
        (SELECT count(DISTINCT u) = count(*) FROM unnest(p_step_ids) u), 'a step id is listed twice');
    SELECT o.ord, o.step_id, o.output INTO v_bad
      FROM unnest(p_step_ids, p_outputs) WITH ORDINALITY AS o(step_id, output, ord)
     WHERE cyclone._payload_problem(o.output) IS NOT NULL
     ORDER BY o.ord
     LIMIT 1;
    IF FOUND THEN
        PERFORM cyclone._check_payload(format('complete_many: output %s (step %s)', v_bad.ord, v_bad.step_id),
                                       v_bad.output);
    END IF;

    -- Lock order: the runs by root run, then run id (ancestors first for child runs). The same read gives the
    -- batch's workflows, for the gate of _complete_solo_runs below.
    SELECT array_agg(DISTINCT s.run_id ORDER BY s.run_id), array_agg(DISTINCT s.workflow) INTO v_runs, v_workflows
      FROM ONLY cyclone_steps s WHERE s.id = ANY (p_step_ids);
    IF EXISTS (SELECT 1 FROM ONLY cyclone_runs r WHERE r.id = ANY (v_runs) AND r.parent_run_id IS NOT NULL) THEN
        FOR v_run_id IN SELECT u FROM unnest(v_runs) u ORDER BY cyclone._root_run(u), u LOOP
            PERFORM cyclone._lock_run(v_run_id);
        END LOOP;
    ELSE
        PERFORM 1 FROM ONLY cyclone_runs r WHERE r.id = ANY (v_runs) ORDER BY r.id FOR NO KEY UPDATE;
    END IF;

    -- Runs of one step end with it, straight into history (_complete_solo_runs, 22_advance.sql), in a batch
    -- of 64 or more: its one dynamic statement is planned on every call, about 1.5 ms, which a batch repays
    -- only from some 32 steps on (database CPU of claim + complete_many + archive a step, against the usual
    -- way: 2.1x for batches of 1, 0.99 for 32, 0.85 for 100). The UPDATE below no longer matches the steps it
    -- moved, and is not run when they were all of them (a worker's batch of single-step jobs).
    -- It is asked only when a step of the batch is of a workflow of one node: a run of more steps never is one
    -- (its other steps are made at submit), and in a batch of a DAG's steps its DELETE probed every step's run
    -- and siblings to move nothing, 12.5 µs a step, 8% of the database's CPU of a DAG drain (1 -> 8 -> 1,
    -- pg_stat_user_functions). The batch's workflows come with its runs (a sort of a few hundred names), and
    -- are looked up once each. The gate is a guess, never a rule: the DELETE decides which steps are a whole
    -- run (a workflow redefined since a run began, a rerun), and what it leaves the UPDATE completes.
    v_solo := CASE WHEN cardinality(p_step_ids) >= 64
                        AND EXISTS (SELECT 1 FROM cyclone_workflows w
                                     WHERE w.name = ANY (v_workflows)
                                       AND jsonb_array_length(w.definition -> 'nodes') = 1)
                   THEN cyclone._complete_solo_runs(p_worker, p_step_ids, p_lease_generations, p_outputs, v_now)
                   ELSE '{}'::bigint[] END;

    IF cardinality(v_solo) < cardinality(p_step_ids) THEN
        -- Each row finds its own element by array_position (a scan of the id
        -- array, cheap at batch sizes of hundreds) rather than through a join with
        -- unnest(): the generic plan of such a join, from statistics that see few
        -- running steps, re-expanded all three arrays for every row, outputs
        -- included (137 ms for a batch of 370).
        WITH done AS (
            UPDATE ONLY cyclone_steps s
               SET state = 'completed', output = p_outputs[array_position(p_step_ids, s.id)], finished_at = v_now,
                   lease_owner = NULL, lease_expiry = NULL, error = NULL, error_kind = NULL
             WHERE s.id = ANY (p_step_ids)
               AND s.state = 'running'
               AND s.lease_owner = p_worker
               AND s.lease_generation = p_lease_generations[array_position(p_step_ids, s.id)]
               AND (s.timeout IS NULL OR s.started_at + least(s.timeout, interval '366 days') > v_now)
            RETURNING s.id, s.run_id
        )
        SELECT coalesce(array_agg(d.id), '{}'), array_agg(DISTINCT d.run_id ORDER BY d.run_id)
          INTO v_done, v_runs
          FROM done d;

        IF v_runs IS NOT NULL THEN
            PERFORM cyclone._advance_runs(v_runs);
        END IF;
    END IF;

    -- Most often every step was accepted: v_done and v_solo are disjoint parts of p_step_ids, which lists no
    -- step twice, so their sizes say so without `= ANY` of them for each step (a scan of the batch a step,
    -- 1.3 µs in a batch of 300).
    IF cardinality(v_done) + cardinality(v_solo) = cardinality(p_step_ids) THEN
        RETURN QUERY SELECT u.id, true FROM unnest(p_step_ids) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT u.id, u.id = ANY (v_done) OR u.id = ANY (v_solo)
      FROM unnest(p_step_ids) WITH ORDINALITY AS u(id, ord) ORDER BY u.ord;
END
$$;
COMMENT ON FUNCTION cyclone.complete_many(text,bigint[],bigint[],jsonb[]) IS 'Batch complete: each element is its own compare-and-set with the semantics of complete().';
REVOKE ALL ON FUNCTION cyclone.complete_many(text,bigint[],bigint[],jsonb[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.complete_many(text,bigint[],bigint[],jsonb[]) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.complete_many(text,bigint[],bigint[],jsonb[]) TO cyclone_admin;
