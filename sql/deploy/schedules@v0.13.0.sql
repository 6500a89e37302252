-- Deploy cyclone:schedules
-- requires: cron advance operator tables checks clock
-- Schedules (SPEC 13): a cron, a time zone and a workflow to submit at each
-- fire time (a slot). A schedule row keeps its next slot precomputed, so that a
-- tick with nothing due reads one index entry. Every slot that got a run is in
-- cyclone_schedule_runs, and the run carries the slot's idempotency key
-- 'schedule:<name>@<slot in UTC>': a slot is fired at most once, whoever fires
-- it (tick, a concurrent tick, backfill) and across restarts.
-- tick (tick.sql) fires due slots: _lock_due_schedules, then the runs to lock
-- (_schedule_cancellations), then _fire_schedules.
-- Lock order: schedule rows first (by next slot, SKIP LOCKED in tick; one row
-- in schedule/backfill), then runs (runs.sql's order), then steps. Nothing
-- that holds a run lock takes a schedule lock.
BEGIN;

CREATE TABLE cyclone.cyclone_schedules (
    name         text PRIMARY KEY,
    cron         text NOT NULL,
    timezone     text NOT NULL,
    spec         cyclone.cron_spec NOT NULL,
    workflow     text NOT NULL REFERENCES cyclone.cyclone_workflows (name),
    input        jsonb NOT NULL DEFAULT '{}',
    overlap      text NOT NULL DEFAULT 'skip'
        CONSTRAINT schedule_overlap_valid CHECK (overlap IN ('skip', 'allow', 'cancel_other')),
    catchup      interval NOT NULL DEFAULT '1 hour'
        CONSTRAINT schedule_catchup_not_negative CHECK (catchup >= interval '0'),
    deadline     interval CONSTRAINT schedule_deadline_positive CHECK (deadline > interval '0'),
    paused       boolean NOT NULL DEFAULT false,
    next_fire_at timestamptz NOT NULL,
    last_slot    timestamptz,
    last_run_id  uuid,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    CONSTRAINT schedule_input_object CHECK (jsonb_typeof(input) = 'object')
);
CREATE INDEX cyclone_schedules_due ON cyclone.cyclone_schedules (next_fire_at) WHERE NOT paused;
COMMENT ON TABLE cyclone.cyclone_schedules IS 'Schedules: a workflow submitted at each fire time of a cron (SPEC 13).';
COMMENT ON COLUMN cyclone.cyclone_schedules.next_fire_at IS
    'The next slot not yet handled; tick fires it when it is due and the schedule is not paused.';
COMMENT ON COLUMN cyclone.cyclone_schedules.spec IS 'The cron parsed once, at schedule().';
COMMENT ON COLUMN cyclone.cyclone_schedules.last_slot IS 'The latest slot that got a run (tick or backfill).';

-- One row per slot that got a run. open: the run may still be unfinished (the
-- overlap rules read these; tick closes the rows of finished runs). Pruning a
-- run removes its row.
CREATE TABLE cyclone.cyclone_schedule_runs (
    schedule text NOT NULL REFERENCES cyclone.cyclone_schedules (name) ON DELETE CASCADE,
    slot     timestamptz NOT NULL,
    run_id   uuid NOT NULL REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE,
    open     boolean NOT NULL DEFAULT true,
    PRIMARY KEY (schedule, slot)
);
CREATE INDEX cyclone_schedule_runs_run ON cyclone.cyclone_schedule_runs (run_id);
CREATE INDEX cyclone_schedule_runs_open ON cyclone.cyclone_schedule_runs (schedule) WHERE open;
COMMENT ON TABLE cyclone.cyclone_schedule_runs IS 'The runs of each schedule, one per fired slot.';

CREATE VIEW cyclone.cyclone_v_schedules AS
SELECT name, cron, timezone, workflow, overlap, catchup, paused, next_fire_at, last_slot, last_run_id
  FROM cyclone.cyclone_schedules;
COMMENT ON VIEW cyclone.cyclone_v_schedules IS
    'Schedules with their next slot and the latest slot that got a run (SPEC 13).';

-- The slot's idempotency key and its scheduled_for: the slot in UTC, no fraction.
CREATE OR REPLACE FUNCTION cyclone._slot_text(p_slot timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE
AS $$ SELECT to_char(p_slot AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') $$;

-- Submits the schedule's run for one slot and records it, unless the slot
-- already has a run (then: NULL). Overlap is the caller's.
CREATE OR REPLACE FUNCTION cyclone._fire_slot(p_schedule cyclone.cyclone_schedules, p_slot timestamptz)
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
$$;

-- The schedule's runs that are still running or paused; closes the rows of
-- the others.
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
COMMENT ON FUNCTION cyclone.schedule(text, text, text, jsonb, text, text, interval, interval) IS
    'Insert or replace a schedule (SPEC 13). Replacing keeps the fired slots and the paused state.';

CREATE OR REPLACE FUNCTION cyclone.unschedule(p_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    PERFORM cyclone._require_given('unschedule', p_name IS NOT NULL, 'p_name must not be NULL');
    DELETE FROM cyclone_schedules s WHERE s.name = p_name;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION cyclone.unschedule(text) IS
    'Remove a schedule (its runs stay); false when there is none.';

CREATE OR REPLACE FUNCTION cyclone.pause_schedule(p_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    PERFORM cyclone._require_given('pause_schedule', p_name IS NOT NULL, 'p_name must not be NULL');
    UPDATE cyclone_schedules s SET paused = true, updated_at = cyclone.now() WHERE s.name = p_name AND NOT s.paused;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION cyclone.pause_schedule(text) IS
    'Stop firing a schedule; false when it is missing or already paused.';

CREATE OR REPLACE FUNCTION cyclone.resume_schedule(p_name text)
RETURNS boolean
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    PERFORM cyclone._require_given('resume_schedule', p_name IS NOT NULL, 'p_name must not be NULL');
    -- The next slot stays where the pause left it: the slots missed meanwhile
    -- follow the catch-up rule at the next tick.
    UPDATE cyclone_schedules s SET paused = false, updated_at = cyclone.now() WHERE s.name = p_name AND s.paused;
    RETURN FOUND;
END
$$;
COMMENT ON FUNCTION cyclone.resume_schedule(text) IS
    'Fire a paused schedule again (missed slots follow the catch-up rule); false when missing or not paused.';

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
COMMENT ON FUNCTION cyclone.backfill(text, timestamptz, timestamptz) IS
    'Submit every slot of a schedule in [p_from, p_to) that has no run yet (overlap ignored); '
    'returns how many runs it created. At most 10000 slots a call.';

-- Locks the schedules with a due slot, oldest slot first, skipping those
-- another tick holds; at most p_limit.
CREATE OR REPLACE FUNCTION cyclone._lock_due_schedules(p_now timestamptz, p_limit int)
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

-- The runs _fire_schedules may cancel (cancel_other), for the caller to lock
-- up front with the others.
CREATE OR REPLACE FUNCTION cyclone._schedule_cancellations(p_names text[])
RETURNS SETOF uuid
LANGUAGE sql STABLE
AS $$
    SELECT sr.run_id
      FROM cyclone.cyclone_schedules s
      JOIN cyclone.cyclone_schedule_runs sr ON sr.schedule = s.name AND sr.open
      JOIN cyclone.cyclone_runs r ON r.id = sr.run_id AND r.state IN ('running', 'paused')
     WHERE s.name = ANY (p_names) AND s.overlap = 'cancel_other'
$$;

-- Fires the due slots of the locked schedules p_names, oldest first across
-- them: at most p_max_runs runs, and at most p_max_slots slots looked at (an
-- outage can leave many to skip; the rest wait for the next call). A slot
-- older than now - catchup is skipped unless it is the schedule's latest due
-- slot; overlap then decides. Returns the runs created and the slots skipped.
CREATE OR REPLACE FUNCTION cyclone._fire_schedules(p_names text[], p_now timestamptz, p_max_runs int, p_max_slots int,
    OUT scheduled int, OUT skipped int)
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

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA cyclone FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.schedule(text, text, text, jsonb, text, text, interval, interval),
                          cyclone.unschedule(text), cyclone.pause_schedule(text), cyclone.resume_schedule(text),
                          cyclone.backfill(text, timestamptz, timestamptz)
   TO cyclone_worker, cyclone_admin;
GRANT SELECT ON cyclone.cyclone_v_schedules TO cyclone_worker, cyclone_client, cyclone_admin;
GRANT SELECT ON cyclone.cyclone_schedules, cyclone.cyclone_schedule_runs TO cyclone_admin;

COMMIT;
