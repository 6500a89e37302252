-- Verify cyclone:worker_registry
BEGIN;
SELECT name, info, started_at, last_seen_at FROM cyclone.cyclone_workers WHERE FALSE;
SELECT 1 / has_table_privilege('cyclone_admin', 'cyclone.cyclone_workers', 'select')::int;
SELECT 1 / (NOT has_table_privilege('cyclone_worker', 'cyclone.cyclone_workers', 'select'))::int;
SELECT 1 / (NOT has_table_privilege('cyclone_worker', 'cyclone.cyclone_workers', 'insert'))::int;
ROLLBACK;
