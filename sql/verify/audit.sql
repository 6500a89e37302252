-- Verify cyclone:audit
BEGIN;
SELECT 1 / (pg_get_expr(d.adbin, d.adrelid) = 'cyclone._actor()')::int
  FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
 WHERE d.adrelid = 'cyclone.cyclone_audit'::regclass AND a.attname = 'actor';
SELECT 1 / has_table_privilege('cyclone_client', 'cyclone.cyclone_v_audit', 'select')::int;
-- Where the action came from (issue 36): a session's application_name follows the actor.
SELECT set_config('application_name', 'verify', true);
SELECT 1 / (cyclone._actor() = session_user || ' from verify')::int;
ROLLBACK;
