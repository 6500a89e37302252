-- Verify cyclone:explain
BEGIN;
SELECT name, bucket, concurrency, running, rate, period, claims_in_period, available
  FROM cyclone.cyclone_v_limits WHERE false;
SELECT 'cyclone.explain_step(bigint)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_client', 'cyclone.explain_step(bigint)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.explain_step(bigint)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.explain_step(bigint)', 'execute'))::int;
SELECT 1 / has_table_privilege('cyclone_worker', 'cyclone.cyclone_v_limits', 'select')::int;
SELECT 1 / has_table_privilege('cyclone_client', 'cyclone.cyclone_v_limits', 'select')::int;
-- Issue 30: a step due at infinity is not_due until null.
SELECT 1 / (pg_get_functiondef('cyclone.explain_step(bigint)'::regprocedure) ~ 'isfinite\(v_step.scheduled_at\)')::int;
-- SPEC 18: claimable counts the live registered workers that would claim the step.
SELECT 1 / (pg_get_functiondef('cyclone.explain_step(bigint)'::regprocedure) ~ 'cyclone_workers')::int;
ROLLBACK;
