-- Verify cyclone:schedules
BEGIN;
SELECT name, cron, timezone, workflow, overlap, catchup, paused, next_fire_at, last_slot, last_run_id
  FROM cyclone.cyclone_v_schedules WHERE false;
SELECT schedule, slot, run_id, open FROM cyclone.cyclone_schedule_runs WHERE false;
SELECT 'cyclone.schedule(text, text, text, jsonb, text, text, interval, interval)'::regprocedure,
       'cyclone.unschedule(text)'::regprocedure,
       'cyclone.pause_schedule(text)'::regprocedure,
       'cyclone.resume_schedule(text)'::regprocedure,
       'cyclone.backfill(text, timestamptz, timestamptz)'::regprocedure,
       'cyclone._fire_schedules(text[], timestamptz, int, int)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.schedule(text, text, text, jsonb, text, text, interval, interval)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone.schedule(text, text, text, jsonb, text, text, interval, interval)', 'execute'))::int;
SELECT 1 / has_table_privilege('cyclone_client', 'cyclone.cyclone_v_schedules', 'select')::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone._schedule_cancellations(text[])'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- Issue 30: a catch-up of at most 366 days, submit's deadline bound, backfill from the year 1.
SELECT 1 / (pg_get_functiondef('cyclone.schedule(text, text, text, jsonb, text, text, interval, interval)'::regprocedure)
            ~ 'p_catchup must be at most 366 days')::int;
SELECT 1 / (pg_get_functiondef('cyclone.schedule(text, text, text, jsonb, text, text, interval, interval)'::regprocedure)
            ~ '_deadline_problem')::int;
SELECT 1 / (pg_get_functiondef('cyclone.backfill(text, timestamptz, timestamptz)'::regprocedure)
            ~ 'years 1 to 9999')::int;
ROLLBACK;
