-- sql/engine/31_tick.sql: change `tick` — one bounded pass of everything time-driven.
-- Owns: tick (sweep, deadlines, max_wait expiry, due schedule slots, the wake-up for due steps, the history
-- days and archive), and schedule_tick / unschedule_tick, which have pg_cron call tick. pg_cron is optional
-- (SPEC 1): the two helpers look for it only when called, so the engine deploys without it.
-- Requires: 27_sweep.sql (sweep, _sweep_candidates), 28_deadlines.sql (enforce_deadlines, _expire_waits and
-- their candidates), 34_schedules.sql (_lock_due_schedules, _schedule_cancellations, _fire_schedules),
-- 24_claim.sql (_claimable_exists, _refresh_claim_floor), 43_history.sql (_history_day, _history_day_of,
-- archive), 44_workers.sql (_forget_workers), 21_runs.sql (_lock_run, _root_run), 03_checks.sql, 02_clock.sql.
-- Called by: every worker on its poll interval (cyclone_worker), cyclone_admin (`cyclone tick`), and a
-- pg_cron job made by schedule_tick.
-- Lock order: the due schedule rows first (FOR UPDATE SKIP LOCKED, so two ticks never fire one slot), then
-- every run the pass will act on, by root run then run id (21_runs.sql): the sweep's, the deadlines', the
-- max_waits' and the runs an overlap cancel_other will cancel; then their steps, phase by phase. Each phase
-- alone keeps that order, but one phase after another would not, and a complete_many() batch waiting the
-- other way round would deadlock with it. The runs a schedule submits are new (no other transaction can see
-- them), and archive() takes its runs with SKIP LOCKED, so neither waits for anyone.
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=tick NOTE="..."` (docs/architecture.md, Changing the engine).

-- tick: one pass, in this order, each phase bounded so that a pass stays short:
--   1. lock up to 100 due schedules (_lock_due_schedules), then every run the phases below will act on (the
--      same candidate functions with the same limits as the phases use);
--   2. sweep(p_max_reclaims, 100): running steps past their timeout are failed (retried or discarded),
--      those whose lease expired are reclaimed (discarded as reclaim_limit once p_max_reclaims > 0 reclaims
--      are spent);
--   3. enforce_deadlines(100): running runs past their deadline fail;
--   4. _expire_waits(100): wait and child nodes past their max_wait are discarded;
--   5. _fire_schedules: due slots, at most 100 runs and 1,000 slots looked at;
--   6. the dead letters this pass made, read by id (a filter over every discarded step would grow with the
--      dead-letter queue, on every tick);
--   7. NOTIFY cyclone_wakeup when a claim with no filter would take a step now (_claimable_exists: a step
--      held back by a full limit bucket wakes nobody, and with steps without limits due the check reads
--      one index entry). Sent without asking _wake whether a worker waits, as on the other rare paths;
--   8. history (43_history.sql): today's and tomorrow's day tables made ahead of need (one lookup each when
--      they exist), then archive(20000) moves finished runs out of the live tables, last, with this pass's
--      locks already taken.
--   9. the worker registry (44_workers.sql): rows of workers unseen for a day go (_forget_workers; a small
--      table, rows a refresh holds skipped);
--  10. where claims start their walk of queue 0 (_refresh_claim_floor, 24_claim.sql), last: after the sweep's
--      reclaims and the schedules' runs, which it must not pass, and holding its row only until the commit.
-- Returns a jsonb object: the counts "reclaimed", "retried", "discarded" (the sweep's), "deadlines",
-- "max_wait", "slept" (sleep nodes woken, SPEC 16), "scheduled", "skipped_slots", "archived", and "discarded_steps", the dead letters of this
-- pass (step_id, run_id, workflow, node, error_kind, error), for the worker's error hooks.
CREATE OR REPLACE FUNCTION cyclone.tick(p_max_reclaims integer DEFAULT 0)
RETURNS jsonb
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_sweep jsonb;
    v_deadlines uuid[];
    v_waits bigint[];
    v_slept int;
    v_ids bigint[];
    v_discarded jsonb;
    v_run_id uuid;
    v_schedules text[];
    v_fired record;
    v_archived int;
BEGIN
    v_schedules := cyclone._lock_due_schedules(v_now, 100);
    -- Every run the phases below will act on, locked first (same candidate
    -- functions, same limits).
    FOR v_run_id IN
        SELECT d.run_id
          FROM (SELECT c.run_id FROM cyclone._sweep_candidates(v_now, 100) c
                UNION
                SELECT c FROM cyclone._deadline_candidates(v_now, 100) c
                UNION
                SELECT c.run_id FROM cyclone._wait_candidates(v_now, 100) c
                UNION
                SELECT c FROM cyclone._schedule_cancellations(v_schedules) c) d
         ORDER BY cyclone._root_run(d.run_id), d.run_id
    LOOP
        PERFORM cyclone._lock_run(v_run_id);
    END LOOP;

    SELECT coalesce(jsonb_agg(to_jsonb(s)), '[]') INTO v_sweep FROM cyclone.sweep(p_max_reclaims, 100) s;
    v_deadlines := ARRAY(SELECT cyclone.enforce_deadlines(100));
    SELECT coalesce(array_agg(w.step_id) FILTER (WHERE NOT w.slept), '{}'), count(*) FILTER (WHERE w.slept)
      INTO v_waits, v_slept
      FROM cyclone._expire_waits(100) w;
    SELECT * INTO v_fired FROM cyclone._fire_schedules(v_schedules, v_now, 100, 1000);

    -- The dead letters of this pass, gathered by id first: a filter over every
    -- discarded step would grow with the dead-letter queue, on every tick.
    v_ids := ARRAY(SELECT (e ->> 'step_id')::bigint FROM jsonb_array_elements(v_sweep) e
                    WHERE e ->> 'action' = 'discarded')
             || v_waits
             || ARRAY(SELECT s.id FROM ONLY cyclone_steps s
                       WHERE s.run_id = ANY (v_deadlines) AND s.state = 'discarded' AND s.error_kind = 'deadline');
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'step_id', s.id, 'run_id', s.run_id, 'workflow', r.workflow, 'node', s.node,
               'error_kind', s.error_kind, 'error', s.error) ORDER BY s.id), '[]')
      INTO v_discarded
      FROM ONLY cyclone_steps s JOIN ONLY cyclone_runs r ON r.id = s.run_id
     WHERE s.id = ANY (v_ids) AND s.state = 'discarded';

    IF cyclone._claimable_exists(v_now) THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;

    -- History (history.sql): today's and tomorrow's tables ahead, then finished
    -- runs out of the live tables, last, with this pass's locks already taken.
    PERFORM cyclone._history_day(d) FROM unnest(ARRAY[cyclone._history_day_of(v_now),
                                                       cyclone._history_day_of(v_now) + 1]) d;
    -- 20,000 a pass, not 5,000 as before 0.24.0: archive reads its whole
    -- queue and deletes from the live tables by scans whose cost grows with
    -- them, so a pass that moved fewer runs than finished in a second fell
    -- further behind at each pass (issue 37: at 7,000 runs a second of jobs
    -- completed in batches under 64, the queue grew from 66,000 to 216,000 in
    -- a minute, and every function slowed with the live tables; at 20,000 it
    -- stayed between 5,000 and 14,000). 20,000 runs take about half a second
    -- at archive's 38,600 a second (history.md), more behind a backlog.
    v_archived := cyclone.archive(20000);
    PERFORM cyclone._forget_workers(v_now);
    -- Where claims start their walk of queue 0: after the sweep's reclaims and the schedules' runs, which it
    -- must not pass, and last, so that the row is held for no longer than the commit.
    PERFORM cyclone._refresh_claim_floor(v_now);

    RETURN jsonb_build_object(
        'reclaimed', (SELECT count(*) FROM jsonb_array_elements(v_sweep) e WHERE e ->> 'action' = 'reclaimed'),
        'retried', (SELECT count(*) FROM jsonb_array_elements(v_sweep) e WHERE e ->> 'action' = 'retried'),
        'discarded', (SELECT count(*) FROM jsonb_array_elements(v_sweep) e WHERE e ->> 'action' = 'discarded'),
        'deadlines', cardinality(v_deadlines),
        'max_wait', cardinality(v_waits),
        'slept', v_slept,
        'scheduled', v_fired.scheduled,
        'skipped_slots', v_fired.skipped,
        'archived', v_archived,
        'discarded_steps', v_discarded);
END
$$;
COMMENT ON FUNCTION cyclone.tick(integer) IS 'One pass of time-driven work. Returns {"reclaimed","retried","discarded","deadlines","max_wait","slept","scheduled","skipped_slots","archived"} counts, plus "discarded_steps": the dead letters this pass made, for error hooks.';
REVOKE ALL ON FUNCTION cyclone.tick(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.tick(integer) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.tick(integer) TO cyclone_admin;

-- schedule_tick: has pg_cron run `SELECT cyclone.tick(p_max_reclaims)` on p_schedule, as the job named
-- cyclone-tick; returns pg_cron's job id. p_schedule must be non-empty and p_max_reclaims >= 0 (22023;
-- pg_cron checks the schedule's syntax); 55000, with a hint, when pg_cron is not installed in this
-- database. pg_cron is called through EXECUTE with its schema named at run time, because it may be absent.
CREATE OR REPLACE FUNCTION cyclone.schedule_tick(
    p_schedule text DEFAULT '* * * * *'::text,
    p_max_reclaims integer DEFAULT 0)
RETURNS bigint
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_job bigint;
BEGIN
    PERFORM cyclone._require('schedule_tick', p_schedule <> '' AND p_max_reclaims >= 0,
                             'p_schedule must be a cron schedule and p_max_reclaims >= 0');
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_cron') THEN
        RAISE EXCEPTION 'schedule_tick: pg_cron is not installed in database %', current_database()
            USING ERRCODE = '55000',
                  HINT = 'CREATE EXTENSION pg_cron (it must be in shared_preload_libraries), or drive tick() from the worker.';
    END IF;
    -- Dynamic, schema named at run time: pg_cron is optional and may be absent.
    EXECUTE format('SELECT %I.schedule($1, $2, $3)', 'cron')
       INTO v_job
      USING 'cyclone-tick', p_schedule, format('SELECT cyclone.tick(%s)', p_max_reclaims);
    RETURN v_job;
END
$$;
COMMENT ON FUNCTION cyclone.schedule_tick(text,integer) IS 'Have pg_cron run cyclone.tick() on p_schedule (job name cyclone-tick). Needs pg_cron in this database.';
REVOKE ALL ON FUNCTION cyclone.schedule_tick(text,integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.schedule_tick(text,integer) TO cyclone_admin;

-- unschedule_tick: removes the job schedule_tick made. False when there is none, or no pg_cron at all.
CREATE OR REPLACE FUNCTION cyclone.unschedule_tick()
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_found boolean;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_cron') THEN
        RETURN false;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %I.job WHERE jobname = $1)', 'cron')
       INTO v_found USING 'cyclone-tick';
    IF v_found THEN
        EXECUTE format('SELECT %I.unschedule($1)', 'cron') USING 'cyclone-tick';
    END IF;
    RETURN v_found;
END
$$;
COMMENT ON FUNCTION cyclone.unschedule_tick() IS 'Remove the pg_cron job made by schedule_tick(); false when there was none.';
REVOKE ALL ON FUNCTION cyclone.unschedule_tick() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.unschedule_tick() TO cyclone_admin;
