-- Revert cyclone:schedules to 0.17.0: the definitions 0.17.0 deployed of every function, view and trigger
-- that the 0.18.0 deploy re-creates, with their comments, read from a database at @v0.17.0 (0.17.0's
-- deploy scripts held only what each release changed, so no one earlier script has them all).
BEGIN;

CREATE OR REPLACE FUNCTION cyclone._fire_schedules(p_names text[], p_now timestamp with time zone, p_max_runs integer, p_max_slots integer, OUT scheduled integer, OUT skipped integer)
 RETURNS record
 LANGUAGE plpgsql
AS $$
DECLARE
    v_schedules cyclone.cyclone_schedules[];
    v_at timestamptz[];
    v_s cyclone.cyclone_schedules;
    v_i int;
    v_slot timestamptz;
    v_next timestamptz;
    v_looked int := 0;
    v_unfinished uuid[];
    v_run_id uuid;
BEGIN
    scheduled := 0;
    skipped := 0;
    v_schedules := ARRAY(SELECT s FROM cyclone_schedules s WHERE s.name = ANY (p_names) ORDER BY s.name);
    v_at := ARRAY(SELECT s.next_fire_at FROM unnest(v_schedules) WITH ORDINALITY s ORDER BY s.ordinality);

    WHILE scheduled < p_max_runs AND v_looked < p_max_slots LOOP
        -- The schedule whose next slot is the oldest due one.
        v_i := NULL;
        FOR j IN 1 .. cardinality(v_schedules) LOOP
            IF v_at[j] <= p_now AND (v_i IS NULL OR v_at[j] < v_at[v_i]) THEN
                v_i := j;
            END IF;
        END LOOP;
        EXIT WHEN v_i IS NULL;
        v_s := v_schedules[v_i];
        v_slot := v_at[v_i];
        v_next := coalesce(cyclone._cron_after(v_s.spec, v_slot, v_s.timezone), 'infinity');
        v_at[v_i] := v_next;
        v_looked := v_looked + 1;

        IF EXISTS (SELECT 1 FROM cyclone_schedule_runs sr WHERE sr.schedule = v_s.name AND sr.slot = v_slot) THEN
            CONTINUE;  -- backfilled already
        END IF;
        IF v_slot < p_now - v_s.catchup AND v_next <= p_now THEN
            skipped := skipped + 1;  -- too old, and not the latest due slot
            CONTINUE;
        END IF;
        IF v_s.overlap <> 'allow' THEN
            v_unfinished := cyclone._unfinished_schedule_runs(v_s.name);
            IF v_s.overlap = 'skip' AND cardinality(v_unfinished) > 0 THEN
                skipped := skipped + 1;
                CONTINUE;
            END IF;
            FOREACH v_run_id IN ARRAY v_unfinished LOOP
                PERFORM cyclone.cancel(v_run_id, format('schedule "%s": slot %s (overlap cancel_other)',
                                                        v_s.name, cyclone._slot_text(v_slot)));
            END LOOP;
        END IF;
        IF cyclone._fire_slot(v_s, v_slot) IS NOT NULL THEN
            scheduled := scheduled + 1;
        END IF;
    END LOOP;

    FOR j IN 1 .. cardinality(v_schedules) LOOP
        UPDATE cyclone_schedules s SET next_fire_at = v_at[j] WHERE s.name = v_schedules[j].name;
    END LOOP;
END
$$;
COMMENT ON FUNCTION cyclone._fire_schedules(text[],timestamp with time zone,integer,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._fire_slot(p_schedule cyclone.cyclone_schedules, p_slot timestamp with time zone)
 RETURNS uuid
 LANGUAGE plpgsql
AS $$
DECLARE
    v_key text := 'schedule:' || p_schedule.name || '@' || cyclone._slot_text(p_slot);
    v_run_id uuid;
BEGIN
    IF EXISTS (SELECT 1 FROM cyclone_schedule_runs sr WHERE sr.schedule = p_schedule.name AND sr.slot = p_slot) THEN
        RETURN NULL;
    END IF;
    SELECT r.id INTO v_run_id FROM ONLY cyclone_runs r WHERE r.workflow = p_schedule.workflow AND r.idempotency_key = v_key;
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
$$;
COMMENT ON FUNCTION cyclone._fire_slot(cyclone.cyclone_schedules,timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._lock_due_schedules(p_now timestamp with time zone, p_limit integer)
 RETURNS text[]
 LANGUAGE sql
AS $$
    SELECT coalesce(array_agg(d.name ORDER BY d.next_fire_at, d.name), '{}')
      FROM (SELECT s.name, s.next_fire_at FROM cyclone.cyclone_schedules s
             WHERE NOT s.paused AND s.next_fire_at <= p_now
             ORDER BY s.next_fire_at
             LIMIT p_limit
               FOR UPDATE SKIP LOCKED) d
$$;
COMMENT ON FUNCTION cyclone._lock_due_schedules(timestamp with time zone,integer) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._reopen_schedule_run()
 RETURNS trigger
 LANGUAGE plpgsql
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
BEGIN
    UPDATE cyclone_schedule_runs sr SET open = true WHERE sr.run_id = NEW.id AND NOT sr.open;
    RETURN NULL;
END
$$;
COMMENT ON FUNCTION cyclone._reopen_schedule_run() IS NULL;

CREATE OR REPLACE FUNCTION cyclone._schedule_cancellations(p_names text[])
 RETURNS SETOF uuid
 LANGUAGE sql
 STABLE
AS $$
    SELECT sr.run_id
      FROM cyclone.cyclone_schedules s
      JOIN cyclone.cyclone_schedule_runs sr ON sr.schedule = s.name AND sr.open
      JOIN ONLY cyclone.cyclone_runs r ON r.id = sr.run_id AND r.state IN ('running', 'paused')
     WHERE s.name = ANY (p_names) AND s.overlap = 'cancel_other'
$$;
COMMENT ON FUNCTION cyclone._schedule_cancellations(text[]) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._slot_text(p_slot timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $$ SELECT to_char(p_slot AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') $$;
COMMENT ON FUNCTION cyclone._slot_text(timestamp with time zone) IS NULL;

CREATE OR REPLACE FUNCTION cyclone._unfinished_schedule_runs(p_name text)
 RETURNS uuid[]
 LANGUAGE plpgsql
AS $$
BEGIN
    UPDATE cyclone_schedule_runs sr
       SET open = false
     WHERE sr.schedule = p_name AND sr.open
       -- Through the parent: a finished run may be archived already (history.sql).
       AND sr.run_id = ANY (ARRAY(SELECT r.id FROM cyclone_schedule_runs x JOIN cyclone_runs r ON r.id = x.run_id
                                   WHERE x.schedule = p_name AND x.open AND r.state NOT IN ('running', 'paused')
                                     FOR SHARE OF r SKIP LOCKED));
    RETURN ARRAY(SELECT sr.run_id FROM cyclone_schedule_runs sr WHERE sr.schedule = p_name AND sr.open ORDER BY sr.slot);
END
$$;
COMMENT ON FUNCTION cyclone._unfinished_schedule_runs(text) IS NULL;

CREATE OR REPLACE FUNCTION cyclone.backfill(p_name text, p_from timestamp with time zone, p_to timestamp with time zone)
 RETURNS integer
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
    -- p_to is finite once the range holds; p_from may still be -infinity.
    PERFORM cyclone._require('backfill', isfinite(p_from), format('p_from must be finite (got %s)', p_from));
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
COMMENT ON FUNCTION cyclone.backfill(text,timestamp with time zone,timestamp with time zone) IS 'Submit every slot of a schedule in [p_from, p_to) that has no run yet (overlap ignored); returns how many runs it created. At most 10000 slots a call.';

CREATE OR REPLACE FUNCTION cyclone.pause_schedule(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
BEGIN
    PERFORM cyclone._require_given('pause_schedule', p_name IS NOT NULL, 'p_name must not be NULL');
    UPDATE cyclone_schedules s SET paused = true, updated_at = cyclone.now() WHERE s.name = p_name AND NOT s.paused;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION cyclone.pause_schedule(text) IS 'Stop firing a schedule; false when it is missing or already paused.';

CREATE OR REPLACE FUNCTION cyclone.resume_schedule(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
BEGIN
    PERFORM cyclone._require_given('resume_schedule', p_name IS NOT NULL, 'p_name must not be NULL');
    -- The next slot stays where the pause left it: the slots missed meanwhile
    -- follow the catch-up rule at the next tick.
    UPDATE cyclone_schedules s SET paused = false, updated_at = cyclone.now() WHERE s.name = p_name AND s.paused;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION cyclone.resume_schedule(text) IS 'Fire a paused schedule again (missed slots follow the catch-up rule); false when missing or not paused.';

CREATE OR REPLACE FUNCTION cyclone.schedule(p_name text, p_cron text, p_workflow text, p_input jsonb DEFAULT '{}'::jsonb, p_timezone text DEFAULT 'UTC'::text, p_overlap text DEFAULT 'skip'::text, p_catchup interval DEFAULT '01:00:00'::interval, p_deadline interval DEFAULT NULL::interval)
 RETURNS void
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
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
        RAISE EXCEPTION 'schedule: time zone % is not in pg_timezone_names', cyclone._shown(p_timezone)
            USING ERRCODE = '22023';
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
COMMENT ON FUNCTION cyclone.schedule(text,text,text,jsonb,text,text,interval,interval) IS 'Insert or replace a schedule (SPEC 13). Replacing keeps the fired slots and the paused state.';

CREATE OR REPLACE FUNCTION cyclone.unschedule(p_name text)
 RETURNS boolean
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'cyclone', 'pg_temp'
AS $$
BEGIN
    PERFORM cyclone._require_given('unschedule', p_name IS NOT NULL, 'p_name must not be NULL');
    DELETE FROM cyclone_schedules s WHERE s.name = p_name;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION cyclone.unschedule(text) IS 'Remove a schedule (its runs stay); false when there is none.';

CREATE OR REPLACE TRIGGER cyclone_runs_reopen_schedule_run AFTER UPDATE OF state ON cyclone.cyclone_runs FOR EACH ROW WHEN (((old.state = ANY (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text])) AND (new.state = ANY (ARRAY['running'::text, 'paused'::text])))) EXECUTE FUNCTION cyclone._reopen_schedule_run();

COMMIT;
