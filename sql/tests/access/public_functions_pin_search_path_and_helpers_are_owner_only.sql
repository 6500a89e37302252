-- Every public (non-underscore) function runs as its owner, SECURITY DEFINER, with
-- search_path pinned to cyclone, pg_temp, so callers need no table privileges and
-- cannot hijack name resolution. The internal _helpers pin nothing (a SET clause
-- costs every call): they run only inside those functions, with that search_path,
-- as no role but the owner can call them, and never as SECURITY DEFINER.
BEGIN;
SELECT plan(5);

SELECT cmp_ok((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'cyclone'::regnamespace AND proname !~ '^_'),
              '>=', 20, 'there are public functions to check');
SELECT is((SELECT array_agg(oid::regprocedure::text ORDER BY oid::regprocedure::text) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace AND proname !~ '^_' AND NOT prosecdef),
          NULL, 'every public function is SECURITY DEFINER');
SELECT is((SELECT array_agg(oid::regprocedure::text ORDER BY oid::regprocedure::text) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace AND proname !~ '^_'
              AND NOT coalesce(proconfig @> ARRAY['search_path=cyclone, pg_temp'], false)),
          NULL, 'every public function pins search_path = cyclone, pg_temp');
SELECT is((SELECT array_agg(oid::regprocedure::text ORDER BY oid::regprocedure::text) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace AND proname ~ '^_' AND prosecdef),
          NULL, 'no internal helper is SECURITY DEFINER');
SELECT is((SELECT array_agg(DISTINCT p.oid::regprocedure::text || ' to ' || coalesce(r.rolname, 'PUBLIC'))
             FROM pg_proc p, aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
             LEFT JOIN pg_roles r ON r.oid = a.grantee
            WHERE p.pronamespace = 'cyclone'::regnamespace AND p.proname ~ '^_'
              AND a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner),
          NULL, 'no role but the owner may execute an internal helper');

SELECT * FROM finish();
ROLLBACK;
