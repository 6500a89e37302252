-- Verify cyclone:schema
BEGIN;

SELECT pg_catalog.has_schema_privilege('cyclone', 'usage');
SELECT 1 / count(*) FROM pg_roles
 WHERE rolname IN ('cyclone_worker', 'cyclone_client', 'cyclone_admin')
HAVING count(*) = 3;

ROLLBACK;
