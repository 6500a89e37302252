-- Revert cyclone:tick to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.schedule_tick(p_schedule text DEFAULT '* * * * *'::text, p_max_reclaims integer DEFAULT 0)
 RETURNS bigint
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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

CREATE OR REPLACE FUNCTION cyclone.tick(p_max_reclaims integer DEFAULT 0)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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

CREATE OR REPLACE FUNCTION cyclone.unschedule_tick()
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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

COMMIT;
