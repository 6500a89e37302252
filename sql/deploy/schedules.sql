-- Deploy cyclone:schedules
-- requires: schedules@v0.18.0 cron advance operator tables checks clock history
-- A complete copy of sql/engine/34_schedules.sql, written by scripts/rework.py: read and edit that file, not this one.
BEGIN;

-- sql/engine/34_schedules.sql: change `schedules` — submitting a workflow at every fire time of a cron
-- (SPEC 13).
-- A schedule is a cron, a time zone and a workflow to submit at each fire time (a slot). Its row in
-- cyclone_schedules keeps the cron parsed (spec) and its next slot computed (next_fire_at), so that a tick
-- with nothing due reads one index entry and never parses. Every slot that got a run has a row in
-- cyclone_schedule_runs, and the run carries the slot's idempotency key 'schedule:<name>@<slot in UTC>':
-- a slot is fired at most once, whoever fires it (a tick, a concurrent tick, backfill) and across restarts.
-- Owns: schedule, unschedule, pause_schedule, resume_schedule, backfill; firing one slot (_fire_slot,
-- _slot_text); tick's part (_lock_due_schedules, _schedule_cancellations, _unfinished_schedule_runs,
-- _fire_schedules); the trigger that opens a schedule's row again when its run is retried. The tables are in
-- 12_schedules_tables.sql, the view cyclone_v_schedules in 15_views.sql; on a shard, a schedule must be of a
-- partition the shard holds (41_shards.sql).
-- Requires: 33_cron.sql (_cron_spec, _cron_after, _cron_timezone_known), 22_advance.sql (_start_runs),
-- 29_operator.sql (cancel), 03_checks.sql (_require, _require_given, _name_problem, _shown,
-- _check_payload, _deadline_problem), 02_clock.sql.
-- Called by: cyclone_worker (a worker registers its app's schedules when it starts) and cyclone_admin (the
-- CLI's `cyclone schedules`); tick (31_tick.sql) fires due slots: _lock_due_schedules, then it locks the
-- runs _schedule_cancellations names with its other runs, then _fire_schedules.
-- Lock order: schedule rows first (in tick by next slot, SKIP LOCKED; backfill and schedule lock one row),
-- then runs (21_runs.sql's order), then steps. Nothing that holds a run lock takes a schedule lock: a run's
-- end does not touch its schedule; the tick closes the rows of finished runs lazily, under a share lock on
-- each run taken with SKIP LOCKED (_unfinished_schedule_runs); a retry that reopens a run opens its row
-- again while it holds the run's lock (_reopen_schedule_run), so the two never wait for each other in a
-- circle. Runs are read in the live table (ONLY), except where a finished run may be archived already.
--
-- This file is the change's complete current source; edit it here and ship it with
-- `make rework CHANGE=schedules NOTE="..."` (docs/architecture.md, Changing the engine).

-- _slot_text: a slot as its idempotency key and its runs' scheduled_for show it: in UTC, no fraction
-- (YYYY-MM-DDTHH:MI:SSZ).
CREATE OR REPLACE FUNCTION cyclone._slot_text(p_slot timestamp with time zone)
RETURNS text
LANGUAGE sql
IMMUTABLE
AS $$ SELECT to_char(p_slot AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') $$;
REVOKE ALL ON FUNCTION cyclone._slot_text(timestamp with time zone) FROM PUBLIC;

-- _fire_slot: submits the schedule's run for one slot and records it in cyclone_schedule_runs; returns the
-- run's id, or NULL when the slot already has a run (recorded, or a live run submitted by hand with the
-- slot's key, which is then recorded as the slot's). The run's input is the schedule's with scheduled_for
-- set to the slot (overwriting any given), its deadline the schedule's. last_slot and last_run_id only move
-- forward (a backfilled older slot leaves them). Overlap is the caller's. Called by _fire_schedules and
-- backfill, with the schedule row locked. A deadline stored before schedule() bounded it counts as
-- 1,000,000 days (submit's bound): a larger one made the run's deadline_at a raw 22008 in every tick.
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
                                     least(p_schedule.deadline, interval '1000000 days'), v_key, NULL, NULL, NULL))[1];
    INSERT INTO cyclone_schedule_runs (schedule, slot, run_id) VALUES (p_schedule.name, p_slot, v_run_id);
    UPDATE cyclone_schedules s
       SET last_slot = p_slot, last_run_id = v_run_id
     WHERE s.name = p_schedule.name AND (s.last_slot IS NULL OR s.last_slot < p_slot);
    RETURN v_run_id;
END
$$;
REVOKE ALL ON FUNCTION cyclone._fire_slot(cyclone.cyclone_schedules,timestamp with time zone) FROM PUBLIC;

-- schedule: inserts or replaces a schedule (SPEC 13). Every argument is checked before anything is written:
-- 22004 for a NULL (only p_deadline may be NULL); 22023 for a bad name, cron, time zone (shown cut to 40
-- characters), overlap, a catch-up that is negative or over 366 days, a deadline that is not positive or is
-- over 1,000,000 days (submit's bound: _deadline_problem, 03_checks.sql), an input that is not a JSON
-- object or breaks the payload limits (_check_payload: 1 MiB, 100 levels), a cron that never fires; P0002
-- for an unknown workflow. The catch-up is at most 366 days (a year however it is spelled: '1 year' counts
-- as 360 days): slots older than that after an outage are backfill's to submit (backfill), and a catch-up
-- of '300000 years' made the tick's now - catchup a raw 22008, failing every tick for every worker. A new schedule's first
-- slot is the first fire time after now. Replacing keeps the fired slots and the paused state. With the same
-- cron and zone the next slot stays (a worker that registers its schedules at start must not drop the slots
-- an outage left due); a new cron or zone starts after the later of the last fired slot and now.
CREATE OR REPLACE FUNCTION cyclone.schedule(
    p_name text,
    p_cron text,
    p_workflow text,
    p_input jsonb DEFAULT '{}'::jsonb,
    p_timezone text DEFAULT 'UTC'::text,
    p_overlap text DEFAULT 'skip'::text,
    p_catchup interval DEFAULT '01:00:00'::interval,
    p_deadline interval DEFAULT NULL::interval)
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
        RAISE EXCEPTION 'schedule: time zone % is not in pg_timezone_names', cyclone._shown(p_timezone)
            USING ERRCODE = '22023';
    END IF;
    PERFORM cyclone._require('schedule', p_overlap IN ('skip', 'allow', 'cancel_other'),
                             format('p_overlap must be skip, allow or cancel_other (got %s)', cyclone._shown(p_overlap)));
    PERFORM cyclone._require('schedule', p_catchup >= interval '0',
                             format('p_catchup must not be negative (got %s)', p_catchup));
    PERFORM cyclone._require('schedule', p_catchup <= interval '366 days',
                             format('p_catchup must be at most 366 days (got %s)', p_catchup));
    PERFORM cyclone._require('schedule', p_deadline IS NULL OR p_deadline > interval '0',
                             format('p_deadline must be positive (got %s)', p_deadline));
    PERFORM cyclone._require('schedule', cyclone._deadline_problem(p_deadline) IS NULL,
                             format('p_deadline %s', cyclone._deadline_problem(p_deadline)));
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
COMMENT ON FUNCTION cyclone.schedule(text,text,text,jsonb,text,text,interval,interval) IS 'Insert or replace a schedule (SPEC 13): catch-up at most 366 days, deadline at most 1000000 days. Replacing keeps the fired slots and the paused state.';
REVOKE ALL ON FUNCTION cyclone.schedule(text,text,text,jsonb,text,text,interval,interval) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.schedule(text,text,text,jsonb,text,text,interval,interval) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.schedule(text,text,text,jsonb,text,text,interval,interval) TO cyclone_admin;

-- unschedule: deletes the schedule; its rows of cyclone_schedule_runs go with it (cascade), its runs stay.
-- False when there is none.
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
COMMENT ON FUNCTION cyclone.unschedule(text) IS 'Remove a schedule (its runs stay); false when there is none.';
REVOKE ALL ON FUNCTION cyclone.unschedule(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.unschedule(text) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.unschedule(text) TO cyclone_admin;

-- pause_schedule: a paused schedule fires nothing (tick skips it); its runs go on. False when it is missing
-- or already paused.
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
COMMENT ON FUNCTION cyclone.pause_schedule(text) IS 'Stop firing a schedule; false when it is missing or already paused.';
REVOKE ALL ON FUNCTION cyclone.pause_schedule(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.pause_schedule(text) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.pause_schedule(text) TO cyclone_admin;

-- resume_schedule: fires the schedule again. Its next slot stays where the pause left it, so the slots missed
-- meanwhile follow the catch-up rule at the next tick. False when it is missing or not paused.
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
COMMENT ON FUNCTION cyclone.resume_schedule(text) IS 'Fire a paused schedule again (missed slots follow the catch-up rule); false when missing or not paused.';
REVOKE ALL ON FUNCTION cyclone.resume_schedule(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.resume_schedule(text) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.resume_schedule(text) TO cyclone_admin;

-- backfill: submits a run for every slot in [p_from, p_to) that has none yet (the same idempotency keys, so
-- a backfill can be repeated; overlap ignored; paused or not), and returns how many runs it created.
-- Guards: 22004 for a NULL; 22023 unless p_from < p_to <= now, p_from is finite (-infinity would reach
-- the cron walk) and p_from is in the year 1 or later (UTC); P0002 for an unknown schedule. The schedule
-- row is locked (a tick skips it meanwhile). The slots are listed first, at most 10,000 (22023 beyond), so
-- that a range too large writes nothing: that bound, not p_from's, is what keeps a backfill's work small.
-- p_from's bound is the calendar's: a slot's key has a four-digit year (_slot_text), Python's datetime holds
-- the years 1 to 9999, and from 4713 BC the walk raised a raw 22008.
CREATE OR REPLACE FUNCTION cyclone.backfill(
    p_name text,
    p_from timestamp with time zone,
    p_to timestamp with time zone)
RETURNS integer
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
    -- p_to is finite once the range holds; p_from may still be -infinity.
    PERFORM cyclone._require('backfill', isfinite(p_from), format('p_from must be finite (got %s)', p_from));
    PERFORM cyclone._require('backfill', p_from >= timestamptz '0001-01-01 00:00:00+00',
                             format('p_from must be within the years 1 to 9999 (got %s)', p_from));
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
COMMENT ON FUNCTION cyclone.backfill(text,timestamp with time zone,timestamp with time zone) IS 'Submit every slot of a schedule in [p_from, p_to) that has no run yet (overlap ignored); returns how many runs it created. At most 10000 slots a call; p_from in the year 1 or later, p_to at most now.';
REVOKE ALL ON FUNCTION cyclone.backfill(text,timestamp with time zone,timestamp with time zone) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION cyclone.backfill(text,timestamp with time zone,timestamp with time zone) TO cyclone_worker;
GRANT EXECUTE ON FUNCTION cyclone.backfill(text,timestamp with time zone,timestamp with time zone) TO cyclone_admin;

-- _lock_due_schedules: locks the schedules with a due slot (not paused, next_fire_at <= p_now), oldest slot
-- first, at most p_limit, skipping those another tick or a backfill holds; returns their names. The first
-- step of tick, before it locks any run.
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
REVOKE ALL ON FUNCTION cyclone._lock_due_schedules(timestamp with time zone,integer) FROM PUBLIC;

-- _schedule_cancellations: the runs _fire_schedules may cancel: the running or paused runs of the schedules
-- p_names whose overlap is cancel_other. tick locks them up front with the other runs of its pass.
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
REVOKE ALL ON FUNCTION cyclone._schedule_cancellations(text[]) FROM PUBLIC;

-- _unfinished_schedule_runs: the schedule's runs that are still running or paused, oldest slot first; on the
-- way it closes the rows (open = false) of its runs that are not. A row is closed under a share lock on its
-- run, taken without waiting: a run a retry is reopening (the retry holds its lock) stays open for now, and
-- a run reopened since this statement's snapshot is seen as it is now (the lock reads the newest version).
-- So a row that the retry's trigger opens again is never closed behind it. Finished runs are read through
-- cyclone_runs, not ONLY: they may be archived already. Called by _fire_schedules for overlap skip and
-- cancel_other.
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
REVOKE ALL ON FUNCTION cyclone._unfinished_schedule_runs(text) FROM PUBLIC;

-- _fire_schedules: fires the due slots of the locked schedules p_names, oldest first across them: at most
-- p_max_runs runs, and at most p_max_slots slots looked at (an outage can leave many to skip; the rest wait
-- for the next call). For each slot: one that already has a run (a backfill) is passed over; one older than
-- now - catchup is skipped unless it is the schedule's latest due slot; then overlap decides: allow fires,
-- skip skips while the schedule has an unfinished run, cancel_other cancels those runs (cancel, with the
-- slot as the reason; tick locked them up front) and fires. Each schedule's next_fire_at is written once, at
-- the end. Returns the runs created (scheduled) and the slots skipped for age or overlap (skipped): tick's
-- "scheduled" and "skipped_slots". A catch-up stored before schedule() bounded it counts as 366 days: a
-- larger one made now - catchup a raw 22008 and failed every tick.
CREATE OR REPLACE FUNCTION cyclone._fire_schedules(
    p_names text[],
    p_now timestamp with time zone,
    p_max_runs integer,
    p_max_slots integer, OUT scheduled integer, OUT skipped integer)
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
        IF v_slot < p_now - least(v_s.catchup, interval '366 days') AND v_next <= p_now THEN
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
REVOKE ALL ON FUNCTION cyclone._fire_schedules(text[],timestamp with time zone,integer,integer) FROM PUBLIC;

-- _reopen_schedule_run, trigger cyclone_runs_reopen_schedule_run: a finished run of a schedule that comes
-- back (retry, retry_all: 29_operator.sql) opens its row of cyclone_schedule_runs again, so that the overlap
-- rules see it (SPEC 13); before, the next slot fired beside it under overlap skip. The retry holds the
-- run's lock; the tick closes a row only under a share lock on its run, taken with SKIP LOCKED, so the two
-- never wait for each other in a circle. The trigger's WHEN clause keeps it off the hot path: ending a run
-- queues nothing. The search_path is pinned because a trigger runs with the path of whoever updates the run
-- (an admin's direct UPDATE included), and the body names cyclone_schedule_runs unqualified.
CREATE OR REPLACE FUNCTION cyclone._reopen_schedule_run()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = cyclone, pg_temp
AS $$
BEGIN
    UPDATE cyclone_schedule_runs sr SET open = true WHERE sr.run_id = NEW.id AND NOT sr.open;
    RETURN NULL;
END
$$;
REVOKE ALL ON FUNCTION cyclone._reopen_schedule_run() FROM PUBLIC;
CREATE OR REPLACE TRIGGER cyclone_runs_reopen_schedule_run AFTER UPDATE OF state ON cyclone.cyclone_runs FOR EACH ROW WHEN (((old.state = ANY (ARRAY['completed'::text, 'failed'::text, 'cancelled'::text])) AND (new.state = ANY (ARRAY['running'::text, 'paused'::text])))) EXECUTE FUNCTION cyclone._reopen_schedule_run();

COMMIT;
