-- Revert cyclone:schedules (back to its v0.15.0 bodies of the functions below)
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._fire_slot(p_schedule cyclone.cyclone_schedules, p_slot timestamp with time zone)
 RETURNS uuid
 LANGUAGE plpgsql
AS $function$
DECLARE
    v_key text := 'schedule:' || p_schedule.name || '@' || cyclone._slot_text(p_slot);
    v_run_id uuid;
BEGIN
    IF EXISTS (SELECT 1 FROM cyclone_schedule_runs sr WHERE sr.schedule = p_schedule.name AND sr.slot = p_slot) THEN
        RETURN NULL;
    END IF;
    SELECT r.id INTO v_run_id FROM cyclone_runs r WHERE r.workflow = p_schedule.workflow AND r.idempotency_key = v_key;
    IF FOUND THEN
        -- Submitted by hand with the slot's key: the slot has its run.
        INSERT INTO cyclone_schedule_runs (schedule, slot, run_id) VALUES (p_schedule.name, p_slot, v_run_id);
        RETURN NULL;
    END IF;
    v_run_id := (cyclone._start_runs(p_schedule.workflow,
                                     ARRAY[p_schedule.input || jsonb_build_object('scheduled_for', cyclone._slot_text(p_slot))],
                                     p_schedule.deadline, v_key, NULL, NULL, NULL))[1];
    INSERT INTO cyclone_schedule_runs (schedule, slot, run_id) VALUES (p_schedule.name, p_slot, v_run_id);
    UPDATE cyclone_schedules s
       SET last_slot = p_slot, last_run_id = v_run_id
     WHERE s.name = p_schedule.name AND (s.last_slot IS NULL OR s.last_slot < p_slot);
    RETURN v_run_id;
END
$function$;

CREATE OR REPLACE FUNCTION cyclone._schedule_cancellations(p_names text[])
 RETURNS SETOF uuid
 LANGUAGE sql
 STABLE
AS $function$
    SELECT sr.run_id
      FROM cyclone.cyclone_schedules s
      JOIN cyclone.cyclone_schedule_runs sr ON sr.schedule = s.name AND sr.open
      JOIN cyclone.cyclone_runs r ON r.id = sr.run_id AND r.state IN ('running', 'paused')
     WHERE s.name = ANY (p_names) AND s.overlap = 'cancel_other'
$function$;

CREATE OR REPLACE FUNCTION cyclone._unfinished_schedule_runs(p_name text)
 RETURNS uuid[]
 LANGUAGE plpgsql
AS $function$
BEGIN
    UPDATE cyclone_schedule_runs sr
       SET open = false
     WHERE sr.schedule = p_name AND sr.open
       AND sr.run_id = ANY (ARRAY(SELECT r.id FROM cyclone_schedule_runs x JOIN cyclone_runs r ON r.id = x.run_id
                                   WHERE x.schedule = p_name AND x.open AND r.state NOT IN ('running', 'paused')
                                     FOR SHARE OF r SKIP LOCKED));
    RETURN ARRAY(SELECT sr.run_id FROM cyclone_schedule_runs sr WHERE sr.schedule = p_name AND sr.open ORDER BY sr.slot);
END
$function$;

COMMIT;
