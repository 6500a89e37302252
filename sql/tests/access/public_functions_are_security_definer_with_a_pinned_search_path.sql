-- Every public (non-underscore) function runs as its owner, SECURITY DEFINER, with
-- search_path pinned to cyclone, pg_temp, so callers need no table privileges and
-- cannot hijack name resolution.
BEGIN;
SELECT plan(3);

SELECT cmp_ok((SELECT count(*)::int FROM pg_proc WHERE pronamespace = 'cyclone'::regnamespace AND proname !~ '^_'),
              '>=', 20, 'there are public functions to check');
SELECT is((SELECT array_agg(oid::regprocedure::text ORDER BY oid::regprocedure::text) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace AND proname !~ '^_' AND NOT prosecdef),
          NULL, 'every public function is SECURITY DEFINER');
SELECT is((SELECT array_agg(oid::regprocedure::text ORDER BY oid::regprocedure::text) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace
              AND NOT coalesce(proconfig @> ARRAY['search_path=cyclone, pg_temp'], false)),
          NULL, 'every function in the schema pins search_path = cyclone, pg_temp');

SELECT * FROM finish();
ROLLBACK;
