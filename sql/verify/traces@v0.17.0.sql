-- Verify cyclone:traces
BEGIN;
SELECT traceparent FROM cyclone.cyclone_runs WHERE FALSE;
SELECT 1 / count(*)::int FROM pg_constraint
 WHERE conrelid = 'cyclone.cyclone_runs'::regclass AND conname = 'run_traceparent_valid';
SELECT 1 / (cyclone._traceparent_problem('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01') IS NULL)::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone._traceparent_problem(text)', 'execute'))::int;
ROLLBACK;
