-- backfill's range is within the years 1 to 9999 (a slot's key has a four-digit year; Python's datetime
-- holds no other): p_from before the year 1 raises 22023 naming it and writes nothing. Issue 30, finding
-- 11: a backfill from 4713 BC raised PostgreSQL's raw 22008. The 10,000-slot bound, not this one, keeps a
-- backfill small; a backfill from the year 1 itself works, west of UTC too.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('sf') \gset
SELECT cyclone.schedule('daily', '@daily', 'sf');
SELECT cyclone.schedule('ny', '0 12 * * *', 'sf', '{}', 'America/New_York');

SELECT throws_ok($$SELECT cyclone.backfill('daily', '4713-01-01 00:00:00+00 BC', cyclone.now() - interval '1 day')$$,
                 '22023', NULL, 'from 4713 BC: 22023, not 22008');
SELECT throws_ok($$SELECT cyclone.backfill('daily', '0001-12-31 23:59:59+00 BC', '0001-01-05 00:00:00+00')$$,
                 '22023', 'backfill: p_from must be within the years 1 to 9999 (got 0001-12-31 23:59:59+00 BC)',
                 'from the last second of 1 BC: 22023 naming p_from');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'nothing was written');

SELECT is(cyclone.backfill('daily', '0001-01-01 00:00:00+00', '0001-01-04 00:00:00+00'), 3,
          'from the first moment of the year 1: three daily slots');
SELECT results_eq($$SELECT idempotency_key FROM cyclone_test.schedule_runs('daily')$$,
                  $$VALUES ('schedule:daily@0001-01-01T00:00:00Z'), ('schedule:daily@0001-01-02T00:00:00Z'),
                           ('schedule:daily@0001-01-03T00:00:00Z')$$,
                  'keyed by their four-digit-year slots');
SELECT is(cyclone.backfill('ny', '0001-01-01 00:00:00+00', '0001-01-03 00:00:00+00'), 2,
          'west of UTC, where the first moment of the year 1 is still 1 BC on the wall clock');
SELECT lives_ok($$SELECT cyclone.backfill('daily', '1000-01-01 00:00:00+00', '1000-01-02 00:00:00+00')$$,
                'a range a thousand years ago is accepted');

SELECT * FROM finish();
ROLLBACK;
