-- Verify cyclone:cron
BEGIN;
SELECT 'cyclone.next_fire(text, timestamptz, text)'::regprocedure,
       'cyclone._cron_parse(text)'::regprocedure,
       'cyclone._cron_field(text, text, int, int, text[], int)'::regprocedure,
       'cyclone._cron_value(text, text, text, int, int, text[], int)'::regprocedure,
       'cyclone._cron_next_wall(int[], int[], int[], int[], int[], boolean, boolean, timestamp)'::regprocedure,
       'cyclone._cron_instant(timestamp, text)'::regprocedure,
       'cyclone._cron_timezone_known(text)'::regprocedure,
       'cyclone._cron_spec(text)'::regprocedure,
       'cyclone._cron_after(cyclone.cron_spec, timestamptz, text)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.next_fire(text, timestamptz, text)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.next_fire(text, timestamptz, text)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.next_fire(text, timestamptz, text)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.next_fire(text, timestamptz, text)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone._cron_parse(text)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone._cron_parse(text)', 'execute'))::int;
SELECT 1 / (cyclone.next_fire('0 3 * * *', '2026-01-01 00:00+00') = '2026-01-01 03:00+00')::int;
-- Issue 30: next_fire answers within the years 1 to 9999, and the search passes over the year 0.
SELECT 1 / (pg_get_functiondef('cyclone.next_fire(text, timestamptz, text)'::regprocedure) ~ 'years 1 to 9999')::int;
SELECT 1 / (cyclone.next_fire('@daily', '0001-01-01 00:00+00', 'America/New_York') > '0001-01-01 00:00+00')::int;
ROLLBACK;
