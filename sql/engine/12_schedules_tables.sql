-- sql/engine/12_schedules_tables.sql: the tables of schedules (SPEC 13), and the parsed cron they keep.
-- Owns: the type cron_spec, cyclone_schedules, cyclone_schedule_runs.
-- Requires: 10_runs_tables.sql (a schedule's workflow is a row of cyclone_workflows).
-- Used by: the cron evaluator (_cron_spec, _cron_after; 33_cron.sql), schedule, unschedule, pause_schedule,
-- resume_schedule, backfill and the slot firing tick calls (34_schedules.sql), cyclone_v_schedules
-- (15_views.sql), the shard's trigger that keeps only its own partitions' schedules (41_shards.sql), prune
-- (32_prune.sql), metrics and check_invariants.
-- sqitch reaches this shape through the changes cron and schedules; history dropped the foreign key from
-- cyclone_schedule_runs to the runs.
-- Lock order (34_schedules.sql): schedule rows first (by next slot, SKIP LOCKED in tick; one row in schedule
-- and backfill), then runs, then steps. Nothing that holds a run lock takes a schedule lock.
-- Only the owner writes these tables; cyclone_admin reads them, every role reads cyclone_v_schedules.

-- A parsed cron, as a schedule keeps it, so that tick never parses: the minutes, hours, days of month, months
-- and weekdays (0 = Sunday) it fires on, and whether each day field was unrestricted (a field that begins
-- with `*`): when both day fields are restricted, a day matches if either matches, as in cron.
CREATE TYPE cyclone.cron_spec AS (
    minutes     int[],
    hours       int[],
    days        int[],
    months      int[],
    weekdays    int[],
    any_day     boolean,
    any_weekday boolean
);

-- Schedules: a cron, a time zone and a workflow to submit at each fire time (a slot). A row keeps its next
-- slot precomputed, so that a tick with nothing due reads one index entry. schedule() inserts or replaces a
-- row; replacing keeps the slots already fired and the paused state.
CREATE TABLE cyclone.cyclone_schedules (
    name         text PRIMARY KEY,
    cron         text NOT NULL,          -- as given (the view shows it)
    timezone     text NOT NULL,          -- the wall clock the cron's fire times are read in
    spec         cyclone.cron_spec NOT NULL,
    workflow     text NOT NULL REFERENCES cyclone.cyclone_workflows (name),
    input        jsonb NOT NULL DEFAULT '{}',   -- each run's input, with scheduled_for set to its slot
    -- skip: a slot whose schedule still has a run running or paused is skipped; allow: always submit;
    -- cancel_other: cancel the schedule's unfinished runs, then submit.
    overlap      text NOT NULL DEFAULT 'skip'
        CONSTRAINT schedule_overlap_valid CHECK (overlap IN ('skip', 'allow', 'cancel_other')),
    -- A due slot older than now - catchup when a tick sees it is skipped (counted, never run), except the
    -- most recent due slot.
    catchup      interval NOT NULL DEFAULT '1 hour'
        CONSTRAINT schedule_catchup_not_negative CHECK (catchup >= interval '0'),
    -- Each run's deadline (NULL: none).
    deadline     interval CONSTRAINT schedule_deadline_positive CHECK (deadline > interval '0'),
    paused       boolean NOT NULL DEFAULT false,
    next_fire_at timestamptz NOT NULL,
    last_slot    timestamptz,
    last_run_id  uuid,                   -- the run of last_slot
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    CONSTRAINT schedule_input_object CHECK (jsonb_typeof(input) = 'object')
);
-- The due slots, oldest first: tick reads this (and locks the rows it fires, SKIP LOCKED); a paused schedule
-- has no entry.
CREATE INDEX cyclone_schedules_due ON cyclone.cyclone_schedules (next_fire_at) WHERE NOT paused;
COMMENT ON TABLE cyclone.cyclone_schedules IS 'Schedules: a workflow submitted at each fire time of a cron (SPEC 13).';
COMMENT ON COLUMN cyclone.cyclone_schedules.spec IS 'The cron parsed once, at schedule().';
COMMENT ON COLUMN cyclone.cyclone_schedules.next_fire_at IS
    'The next slot not yet handled; tick fires it when it is due and the schedule is not paused.';
COMMENT ON COLUMN cyclone.cyclone_schedules.last_slot IS 'The latest slot that got a run (tick or backfill).';
GRANT SELECT ON cyclone.cyclone_schedules TO cyclone_admin;

-- One row per slot that got a run. With the run's idempotency key 'schedule:<name>@<slot in UTC>', a slot is
-- fired at most once, whoever fires it (tick, a concurrent tick, backfill) and across restarts.
-- open: the run may still be unfinished. The overlap rules read the open rows; tick closes the rows of
-- finished runs (under a share lock on the run), and a trigger on runs opens a row again when its run is
-- retried back to running (34_schedules.sql). No foreign key to the run: the row stays when the run moves to
-- history (a cascade would delete it at archive); prune deletes it with the run. Unscheduling deletes a
-- schedule's rows by the cascade.
CREATE TABLE cyclone.cyclone_schedule_runs (
    schedule text NOT NULL REFERENCES cyclone.cyclone_schedules (name) ON DELETE CASCADE,
    slot     timestamptz NOT NULL,
    run_id   uuid NOT NULL,
    open     boolean NOT NULL DEFAULT true,
    PRIMARY KEY (schedule, slot)
);
-- A run's slot: the reopening trigger, prune's delete, check_invariants.
CREATE INDEX cyclone_schedule_runs_run ON cyclone.cyclone_schedule_runs (run_id);
-- A schedule's runs that may be unfinished: the overlap rules.
CREATE INDEX cyclone_schedule_runs_open ON cyclone.cyclone_schedule_runs (schedule) WHERE open;
COMMENT ON TABLE cyclone.cyclone_schedule_runs IS 'The runs of each schedule, one per fired slot.';
GRANT SELECT ON cyclone.cyclone_schedule_runs TO cyclone_admin;
