-- next_fire reads no clock and writes nothing (STABLE: it reads pg_timezone_names),
-- is SECURITY DEFINER with a pinned search_path, and every Cyclone role may call
-- it (SPEC 13); PUBLIC may not, nor may any role call its helpers.
BEGIN;
SELECT plan(9);

SELECT volatility_is('cyclone', 'next_fire', ARRAY['text', 'timestamp with time zone', 'text'], 'stable', 'next_fire is STABLE');
SELECT is_definer('cyclone', 'next_fire', ARRAY['text', 'timestamp with time zone', 'text'], 'next_fire is SECURITY DEFINER');
SELECT ok(has_function_privilege(r, 'cyclone.next_fire(text, timestamptz, text)', 'EXECUTE'), r || ' can execute next_fire')
  FROM unnest(ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin']) r;
SELECT ok(NOT has_function_privilege('public', 'cyclone.next_fire(text, timestamptz, text)', 'EXECUTE'),
          'PUBLIC cannot execute next_fire');
SELECT is((SELECT array_agg(p.oid::regprocedure::text || ' ' || r ORDER BY 1) FROM pg_proc p,
                  unnest(ARRAY['cyclone_worker', 'cyclone_client', 'cyclone_admin']) r
            WHERE p.pronamespace = 'cyclone'::regnamespace AND p.proname LIKE '\_cron%'
              AND has_function_privilege(r, p.oid, 'EXECUTE')),
          NULL, 'no role can execute the _cron helpers');
SET LOCAL ROLE cyclone_client;
SELECT is(cyclone.next_fire('@daily', '2026-01-01 10:00+00', 'Europe/Berlin'), '2026-01-01 23:00+00'::timestamptz,
          'cyclone_client calls it');
RESET ROLE;
SELECT is(cyclone.next_fire('@daily', '2026-01-01 10:00+00', 'Europe/Berlin'), '2026-01-01 23:00+00'::timestamptz,
          'a second call in the session (the zone now remembered) agrees');

SELECT * FROM finish();
ROLLBACK;
