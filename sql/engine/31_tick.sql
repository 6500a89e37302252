-- @@ engine file of change tick; header of tick@v0.15.0.sql:
-- Deploy cyclone:tick
-- requires: tick@v0.5.0 sweep deadlines runs checks clock schedules claim
-- tick(): one bounded pass of everything time-driven (sweep, deadlines, max_wait,
-- due schedule slots, wake-ups for steps whose scheduled_at arrived). The worker calls it on its poll
-- interval; pg_cron can call it too (schedule_tick / unschedule_tick, which look
-- for pg_cron only when called, so the engine deploys without it).
-- Lock order: the due schedules first (SKIP LOCKED, so two ticks never fire
-- one slot), then every run the pass will act on, by root run then run id
-- (see runs.sql): the sweep's, the deadlines', the max_waits' and the runs an
-- overlap cancel_other will cancel. Each phase alone keeps that order, but one
-- phase after another would not, and a complete_many() batch waiting the other
-- way round would deadlock with it. (The runs a schedule submits are new: no
-- other transaction can see them.)
-- Reworked after v0.4.0: due schedule slots are fired (schedules.sql), at most
-- 100 runs and 1,000 slots looked at a call.
-- Reworked after v0.5.0: the wake-up asks claim.sql's _claimable_exists, so a
-- step held back by a full limit bucket wakes nobody (and the check still
-- reads one index entry when steps without limits are due).
-- @@ plan notes of every version of this change:
-- @@ [tick@v0.4.0.sql] tick: one pass of everything time-driven; optional pg_cron scheduling.
-- @@ [tick@v0.5.0.sql] tick fires due schedule slots (SPEC 13) and returns scheduled and skipped_slots.
-- @@ [tick@v0.15.0.sql] tick wakes idle workers only for a step a claim would take: queue 0 first, then buckets with room (limits).
-- @@ [tick.sql] tick archives finished runs (archive) and makes today's and tomorrow's history tables ahead; its result counts "archived".

-- @@ last defined in tick.sql (a dump); prose below from tick@v0.15.0.sql; redefined since in: tick.sql
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
    v_waits := ARRAY(SELECT cyclone._expire_waits(100));
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
    v_archived := cyclone.archive(5000);

    RETURN jsonb_build_object(
        'reclaimed', (SELECT count(*) FROM jsonb_array_elements(v_sweep) e WHERE e ->> 'action' = 'reclaimed'),
        'retried', (SELECT count(*) FROM jsonb_array_elements(v_sweep) e WHERE e ->> 'action' = 'retried'),
        'discarded', (SELECT count(*) FROM jsonb_array_elements(v_sweep) e WHERE e ->> 'action' = 'discarded'),
        'deadlines', cardinality(v_deadlines),
        'max_wait', cardinality(v_waits),
        'scheduled', v_fired.scheduled,
        'skipped_slots', v_fired.skipped,
        'archived', v_archived,
        'discarded_steps', v_discarded);
END
$$;
COMMENT ON FUNCTION cyclone.tick(integer) IS 'One pass of time-driven work. Returns {"reclaimed","retried","discarded","deadlines","max_wait","scheduled","skipped_slots","archived"} counts, plus "discarded_steps": the dead letters this pass made, for error hooks.';
REVOKE ALL ON FUNCTION cyclone.tick(integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.tick(integer) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.tick(integer) TO cyclone_admin;

-- @@ last defined in tick@v0.15.0.sql
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

-- @@ last defined in tick@v0.15.0.sql
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
