-- Revert cyclone:tick (back to its v0.15.0 bodies of the functions below)
BEGIN;

CREATE OR REPLACE FUNCTION cyclone.tick(p_max_reclaims integer DEFAULT 0)
 RETURNS jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $function$
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

    IF cyclone._claimable_exists(v_now) THEN
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
$function$;

COMMENT ON FUNCTION cyclone.tick(int) IS
    'One pass of time-driven work. Returns {"reclaimed","retried","discarded","deadlines","max_wait",'
    '"scheduled","skipped_slots"} '
    'counts, plus "discarded_steps": the dead letters this pass made, for error hooks.';

COMMIT;
