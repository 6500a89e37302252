-- Verify cyclone:advance
BEGIN;
SELECT 'cyclone._start_runs(text, jsonb[], interval, text, timestamptz, uuid, bigint, text, int, text, interval)'::regprocedure,
       'cyclone._advance(uuid)'::regprocedure,
       'cyclone._advance_runs(uuid[])'::regprocedure,
       'cyclone._discard_step(bigint, text, text)'::regprocedure,
       'cyclone._notify_parent(uuid)'::regprocedure;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone._advance(uuid)', 'execute'))::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone._finish_runs(uuid[])'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- Runs that end are queued for archive() (live_runs.sql).
SELECT 1 / (pg_get_functiondef('cyclone._finish_runs(uuid[])'::regprocedure) ~ 'cyclone_archive_queue')::int;
-- Issue 30: a child workflow that starts itself is refused before its first child run.
SELECT 1 / (pg_get_functiondef('cyclone._advance(uuid)'::regprocedure) ~ '_child_cycle')::int;
-- Issue 32: the runs that can advance are found first, and one read of the steps ends a batch.
SELECT 1 / (pg_get_functiondef('cyclone._advance_runs(uuid[])'::regprocedure) ~ 'v_pending')::int;
SELECT 1 / (pg_get_functiondef('cyclone._finish_runs(uuid[])'::regprocedure) ~ 'HAVING NOT bool_or')::int;
-- Issue 32: a run of one step ends straight into its day's history tables.
SELECT 1 / (pg_get_functiondef('cyclone._complete_solo_runs(text,bigint[],bigint[],jsonb[],timestamptz)'::regprocedure) ~ 'DELETE FROM ONLY cyclone_runs')::int;
-- Issue 32: only its inserts into the day's tables are dynamic; the deletes are planned once a session.
SELECT 1 / (pg_get_functiondef('cyclone._complete_solo_runs(text,bigint[],bigint[],jsonb[],timestamptz)'::regprocedure) ~ 'FROM unnest\(\$1\) g')::int;
-- Issue 32: the runs' insert joins small arrays (run ids, their steps and nodes; outputs), not the deleted steps' rows.
SELECT 1 / (pg_get_functiondef('cyclone._complete_solo_runs(text,bigint[],bigint[],jsonb[],timestamptz)'::regprocedure) ~ 'v_run_steps')::int;
-- 0.30.0: _complete_solo_runs checks generations by a hashed subplan and finds outputs by joins, not array_position.
SELECT 1 / (pg_get_functiondef('cyclone._complete_solo_runs(text,bigint[],bigint[],jsonb[],timestamptz)'::regprocedure)
            !~ 'array_position')::int;
ROLLBACK;
