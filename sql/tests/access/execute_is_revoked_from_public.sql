-- PostgreSQL grants EXECUTE to PUBLIC on every new function; deploy takes it back
-- on every function in schema cyclone, so a role with nothing granted can call none.
BEGIN;
SELECT plan(5);

SELECT cmp_ok((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'cyclone'::regnamespace), '>=', 30,
              'the schema has its functions (the checks below are not vacuous)');
SELECT is((SELECT array_agg(oid::regprocedure::text ORDER BY oid::regprocedure::text) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace AND has_function_privilege('public', oid, 'EXECUTE')),
          NULL, 'PUBLIC can execute no function in schema cyclone');
SELECT is((SELECT array_agg(oid::regprocedure::text ORDER BY oid::regprocedure::text) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace AND proacl IS NULL),
          NULL, 'no function is left with the default ACL (which includes PUBLIC)');
SELECT is((SELECT array_agg(DISTINCT p.oid::regprocedure::text) FROM pg_proc p, aclexplode(p.proacl) a
            WHERE p.pronamespace = 'cyclone'::regnamespace AND a.grantee = 0),
          NULL, 'no ACL entry grants anything to PUBLIC');

CREATE ROLE cyclone_test_nobody NOLOGIN;
GRANT USAGE ON SCHEMA cyclone TO cyclone_test_nobody;
SET ROLE cyclone_test_nobody;
SELECT throws_ok($$SELECT cyclone.define_workflow('x', '{"nodes": [{"name": "a"}]}')$$, '42501', NULL,
                 'a role with only USAGE on the schema cannot call define_workflow');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
