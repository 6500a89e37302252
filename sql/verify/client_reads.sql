-- Verify cyclone:client_reads
BEGIN;
SELECT 1 / has_table_privilege('cyclone_client', 'cyclone.cyclone_runs', 'select')::int;
SELECT 1 / has_table_privilege('cyclone_client', 'cyclone.cyclone_steps', 'select')::int;
SELECT 1 / (NOT has_table_privilege('cyclone_client', 'cyclone.cyclone_steps', 'update'))::int;
ROLLBACK;
