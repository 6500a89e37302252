-- Verify cyclone:invariants
BEGIN;
SELECT invariant, detail FROM cyclone.check_invariants() WHERE false;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.check_invariants()', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone.check_invariants()', 'execute'))::int;
-- Runs that end are queued for archive() (live_runs.sql).
SELECT 1 / (pg_get_functiondef('cyclone.check_invariants()'::regprocedure) ~ 'cyclone_archive_queue')::int;
ROLLBACK;
