-- Verify cyclone:step_errors
BEGIN;
SELECT id, run_id, step_id, node, attempt, error_kind, error, worker, discarded, at
  FROM cyclone.cyclone_step_errors WHERE FALSE;
SELECT 1 / has_table_privilege('cyclone_client', 'cyclone.cyclone_step_errors', 'select')::int;
SELECT 1 / (NOT has_table_privilege('cyclone_worker', 'cyclone.cyclone_step_errors', 'select'))::int;
ROLLBACK;
