-- The _helpers are called only from inside the SECURITY DEFINER functions; none of
-- the three roles may call them directly.
BEGIN;
SELECT plan(4);

SELECT cmp_ok((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'cyclone'::regnamespace AND proname ~ '^_'),
              '>=', 10, 'there are internal helpers to check');
SELECT is((SELECT array_agg(p.oid::regprocedure::text ORDER BY p.oid::regprocedure::text) FROM pg_proc p
            WHERE p.pronamespace = 'cyclone'::regnamespace AND p.proname ~ '^_'
              AND has_function_privilege(r, p.oid, 'EXECUTE')),
          NULL, format('%s can execute no _helper', r))
  FROM unnest(ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin']) r;

SELECT * FROM finish();
ROLLBACK;
