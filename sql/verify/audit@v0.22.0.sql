-- Verify cyclone:audit
BEGIN;
SELECT 1 / (pg_get_expr(d.adbin, d.adrelid) = 'cyclone._actor()')::int
  FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
 WHERE d.adrelid = 'cyclone.cyclone_audit'::regclass AND a.attname = 'actor';
SELECT 1 / has_table_privilege('cyclone_client', 'cyclone.cyclone_v_audit', 'select')::int;
ROLLBACK;
