-- Revert cyclone:schedules (back to its v0.13.0 state: the functions below as they were)
BEGIN;

DROP TRIGGER cyclone_runs_reopen_schedule_run ON cyclone.cyclone_runs;
DROP FUNCTION cyclone._reopen_schedule_run();

CREATE OR REPLACE FUNCTION cyclone.schedule(
    p_name text,
    p_cron text,
    p_workflow text,
    p_input jsonb DEFAULT '{}',
    p_timezone text DEFAULT 'UTC',
    p_overlap text DEFAULT 'skip',
    p_catchup interval DEFAULT '1 hour',
    p_deadline interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_now timestamptz := cyclone.now();
    v_spec cyclone.cron_spec;
    v_first timestamptz;
BEGIN
    PERFORM cyclone._require_given('schedule', p_name IS NOT NULL AND p_cron IS NOT NULL AND p_workflow IS NOT NULL
                                               AND p_input IS NOT NULL AND p_timezone IS NOT NULL
                                               AND p_overlap IS NOT NULL AND p_catchup IS NOT NULL,
                                   'only p_deadline may be NULL');
    IF cyclone._name_problem(p_name) IS NOT NULL THEN
        RAISE EXCEPTION 'schedule: the schedule name % %', cyclone._shown(p_name), cyclone._name_problem(p_name)
            USING ERRCODE = '22023';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM cyclone_workflows w WHERE w.name = p_workflow) THEN
        RAISE EXCEPTION 'workflow "%" not found', p_workflow USING ERRCODE = 'P0002';
    END IF;
    v_spec := cyclone._cron_spec(p_cron);
    IF NOT cyclone._cron_timezone_known(p_timezone) THEN
        RAISE EXCEPTION 'schedule: time zone "%" is not in pg_timezone_names', p_timezone USING ERRCODE = '22023';
    END IF;
    PERFORM cyclone._require('schedule', p_overlap IN ('skip', 'allow', 'cancel_other'),
                             format('p_overlap must be skip, allow or cancel_other (got %s)', cyclone._shown(p_overlap)));
    PERFORM cyclone._require('schedule', p_catchup >= interval '0',
                             format('p_catchup must not be negative (got %s)', p_catchup));
    PERFORM cyclone._require('schedule', p_deadline IS NULL OR p_deadline > interval '0',
                             format('p_deadline must be positive (got %s)', p_deadline));
    PERFORM cyclone._require('schedule', jsonb_typeof(p_input) = 'object',
                             format('p_input must be a JSON object (got %s)', jsonb_typeof(p_input)));
    PERFORM cyclone._check_payload('schedule: p_input', p_input);
    v_first := cyclone._cron_after(v_spec, v_now, p_timezone);
    IF v_first IS NULL THEN
        RAISE EXCEPTION 'schedule: cron "%" never fires', p_cron USING ERRCODE = '22023';
    END IF;

    -- Replacing keeps the fired slots and the paused state. With the same cron
    -- and zone the next slot stays (a worker that registers its schedules at
    -- start must not drop the slots an outage left due); a new cron or zone
    -- starts after the later of the last fired slot and now.
    INSERT INTO cyclone_schedules AS s (name, cron, timezone, spec, workflow, input, overlap, catchup, deadline,
                                        next_fire_at, created_at, updated_at)
    VALUES (p_name, p_cron, p_timezone, v_spec, p_workflow, p_input, p_overlap, p_catchup, p_deadline,
            v_first, v_now, v_now)
    ON CONFLICT (name) DO UPDATE
       SET cron = excluded.cron, timezone = excluded.timezone, spec = excluded.spec, workflow = excluded.workflow,
           input = excluded.input, overlap = excluded.overlap, catchup = excluded.catchup,
           deadline = excluded.deadline, updated_at = excluded.updated_at,
           next_fire_at = CASE
               WHEN s.cron = excluded.cron AND s.timezone = excluded.timezone THEN s.next_fire_at
               WHEN s.last_slot > v_now THEN
                   cyclone._cron_after(v_spec, s.last_slot, p_timezone)
               ELSE excluded.next_fire_at END;
END
$$;

CREATE OR REPLACE FUNCTION cyclone.backfill(p_name text, p_from timestamptz, p_to timestamptz)
RETURNS int
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
DECLARE
    v_schedule cyclone.cyclone_schedules;
    v_slot timestamptz;
    v_slots timestamptz[] := ARRAY[]::timestamptz[];
    v_created int := 0;
BEGIN
    PERFORM cyclone._require_given('backfill', p_name IS NOT NULL AND p_from IS NOT NULL AND p_to IS NOT NULL,
                                   'p_name, p_from and p_to must not be NULL');
    PERFORM cyclone._require('backfill', p_from < p_to AND p_to <= cyclone.now(),
                             format('p_from < p_to <= now must hold (got [%s, %s), now %s)', p_from, p_to, cyclone.now()));
    SELECT s.* INTO v_schedule FROM cyclone_schedules s WHERE s.name = p_name FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'schedule "%" not found', p_name USING ERRCODE = 'P0002';
    END IF;
    -- The slots first, bounded, so that a range too large writes nothing.
    v_slot := cyclone._cron_after(v_schedule.spec, p_from - interval '1 microsecond', v_schedule.timezone);
    WHILE v_slot < p_to LOOP
        IF cardinality(v_slots) = 10000 THEN
            RAISE EXCEPTION 'backfill: [%, %) holds more than 10000 slots of schedule "%"; backfill it in parts',
                p_from, p_to, p_name USING ERRCODE = '22023';
        END IF;
        v_slots := v_slots || v_slot;
        v_slot := cyclone._cron_after(v_schedule.spec, v_slot, v_schedule.timezone);
    END LOOP;
    FOREACH v_slot IN ARRAY v_slots LOOP
        IF cyclone._fire_slot(v_schedule, v_slot) IS NOT NULL THEN
            v_created := v_created + 1;
        END IF;
    END LOOP;
    RETURN v_created;
END
$$;

-- The comment above it in schedules@v0.13.0.sql.
CREATE OR REPLACE FUNCTION cyclone._unfinished_schedule_runs(p_name text)
RETURNS uuid[]
LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE cyclone_schedule_runs sr
       SET open = false
      FROM cyclone_runs r
     WHERE sr.schedule = p_name AND sr.open AND r.id = sr.run_id AND r.state NOT IN ('running', 'paused');
    RETURN ARRAY(SELECT sr.run_id FROM cyclone_schedule_runs sr WHERE sr.schedule = p_name AND sr.open ORDER BY sr.slot);
END
$$;

COMMIT;
