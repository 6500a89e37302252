-- Revert cyclone:tick (back to its v0.5.0 deploy script, below)
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
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.tick(p_max_reclaims int DEFAULT 0)
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
             || ARRAY(SELECT s.id FROM cyclone_steps s
                       WHERE s.run_id = ANY (v_deadlines) AND s.state = 'discarded' AND s.error_kind = 'deadline');
    SELECT coalesce(jsonb_agg(jsonb_build_object(
               'step_id', s.id, 'run_id', s.run_id, 'workflow', r.workflow, 'node', s.node,
               'error_kind', s.error_kind, 'error', s.error) ORDER BY s.id), '[]')
      INTO v_discarded
      FROM cyclone_steps s JOIN cyclone_runs r ON r.id = s.run_id
     WHERE s.id = ANY (v_ids) AND s.state = 'discarded';

    -- Due work left: the first step in claim order, so that the claim index
    -- answers it even when the statistics still count a drained backlog (an
    -- EXISTS was planned as a sequential scan then).
    PERFORM 1 FROM cyclone_steps s
     WHERE s.state = 'available' AND s.scheduled_at <= v_now
       AND EXISTS (SELECT 1 FROM cyclone_runs r WHERE r.id = s.run_id AND r.state = 'running')
     ORDER BY s.priority, s.scheduled_at, s.id
     LIMIT 1;
    IF FOUND THEN
        PERFORM pg_notify('cyclone_wakeup', '');
    END IF;

    RETURN jsonb_build_object(
        'reclaimed', (SELECT count(*) FROM jsonb_array_elements(v_sweep) e WHERE e ->> 'action' = 'reclaimed'),
        'retried', (SELECT count(*) FROM jsonb_array_elements(v_sweep) e WHERE e ->> 'action' = 'retried'),
        'discarded', (SELECT count(*) FROM jsonb_array_elements(v_sweep) e WHERE e ->> 'action' = 'discarded'),
        'deadlines', cardinality(v_deadlines),
        'max_wait', cardinality(v_waits),
        'scheduled', v_fired.scheduled,
        'skipped_slots', v_fired.skipped,
        'discarded_steps', v_discarded);
END
$$;
COMMENT ON FUNCTION cyclone.tick(int) IS
    'One pass of time-driven work. Returns {"reclaimed","retried","discarded","deadlines","max_wait",'
    '"scheduled","skipped_slots"} '
    'counts, plus "discarded_steps": the dead letters this pass made, for error hooks.';

CREATE OR REPLACE FUNCTION cyclone.schedule_tick(p_schedule text DEFAULT '* * * * *', p_max_reclaims int DEFAULT 0)
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
COMMENT ON FUNCTION cyclone.schedule_tick(text, int) IS
    'Have pg_cron run cyclone.tick() on p_schedule (job name cyclone-tick). Needs pg_cron in this database.';

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

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.tick(int) TO cyclone_worker, cyclone_admin;
GRANT EXECUTE ON FUNCTION cyclone.schedule_tick(text, int), cyclone.unschedule_tick() TO cyclone_admin;

COMMIT;
