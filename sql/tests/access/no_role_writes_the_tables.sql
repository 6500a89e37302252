-- No role but the owner writes the tables (or the views, which are auto-updatable):
-- every write goes through the functions. The client reads the views and the run
-- and step tables (SPEC 10); the admin reads everything; the worker reads nothing directly.
BEGIN;
SELECT plan(17);

SELECT cmp_ok((SELECT count(*)::int FROM pg_class WHERE relnamespace = 'cyclone'::regnamespace AND relkind IN ('r', 'v')),
              '>=', 7, 'the schema has its tables and views');
SELECT is((SELECT array_agg(format('%s %s %s', r, c.oid::regclass, p) ORDER BY 1)
             FROM pg_class c,
                  unnest(ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin']) r,
                  unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE']) p
            WHERE c.relnamespace = 'cyclone'::regnamespace AND c.relkind IN ('r', 'v', 'p')
              AND has_table_privilege(r, c.oid, p)),
          NULL, 'no INSERT, UPDATE, DELETE or TRUNCATE for any role on any table or view');

SELECT table_privs_are('cyclone', 'cyclone_runs', 'cyclone_worker', ARRAY[]::text[], 'worker: no privilege on cyclone_runs');
SELECT table_privs_are('cyclone', 'cyclone_steps', 'cyclone_worker', ARRAY[]::text[], 'worker: no privilege on cyclone_steps');
SELECT table_privs_are('cyclone', 'cyclone_runs', 'cyclone_client', ARRAY['SELECT'], 'client: SELECT only on cyclone_runs');
SELECT table_privs_are('cyclone', 'cyclone_steps', 'cyclone_client', ARRAY['SELECT'], 'client: SELECT only on cyclone_steps');
SELECT table_privs_are('cyclone', 'cyclone_workflows', 'cyclone_client', ARRAY[]::text[], 'client: no privilege on cyclone_workflows');
SELECT table_privs_are('cyclone', 'cyclone_runs', 'cyclone_admin', ARRAY['SELECT'], 'admin: SELECT only on cyclone_runs');
SELECT table_privs_are('cyclone', 'cyclone_steps', 'cyclone_admin', ARRAY['SELECT'], 'admin: SELECT only on cyclone_steps');
SELECT table_privs_are('cyclone', 'clock', 'cyclone_admin', ARRAY['SELECT'], 'admin: SELECT only on the clock (advance_time moves it)');
SELECT ok(has_table_privilege('cyclone_client', 'cyclone.' || v, 'SELECT'), format('cyclone_client can read %s', v))
  FROM unnest(ARRAY['cyclone_v_runs', 'cyclone_v_steps']) v;
-- SPEC 12: every role reads cyclone_v_limits; the limit tables are the admin's to read.
SELECT ok(has_table_privilege(r, 'cyclone.cyclone_v_limits', 'SELECT'), format('%s can read cyclone_v_limits', r))
  FROM unnest(ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin']) r;
SELECT table_privs_are('cyclone', 'cyclone_limits', 'cyclone_client', ARRAY[]::text[], 'client: no privilege on cyclone_limits');
SELECT table_privs_are('cyclone', 'cyclone_buckets', 'cyclone_worker', ARRAY[]::text[], 'worker: no privilege on cyclone_buckets');

SELECT * FROM finish();
ROLLBACK;
