-- schedule's durations are bounded: the catch-up is at most 366 days (slots older than that after an
-- outage are backfill's), the runs' deadline at most 1,000,000 days (submit's bound). A longer one raises
-- 22023 naming it and writes nothing. A catch-up of '300000 years' used to be stored, and then made every
-- tick fail with a raw 22008 (now - catchup), for every worker.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('sb') \gset
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', 'UTC', 'skip', '367 days')$$, '22023',
                 'schedule: p_catchup must be at most 366 days (got 367 days)', 'a catch-up of 367 days');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', 'UTC', 'skip', '300000 years')$$, '22023',
                 NULL, 'a catch-up of 300,000 years');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', 'UTC', 'skip', '1 hour', '1000001 days')$$,
                 '22023', 'schedule: p_deadline must be at most 1000000 days (got 1000001 days)',
                 'a deadline over 1,000,000 days');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', 'UTC', 'skip', '1 hour', '300000 years')$$,
                 '22023', NULL, 'a deadline of 300,000 years');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_schedules), 0, 'nothing was written');

SELECT lives_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', 'UTC', 'skip', '366 days', '1000000 days')$$,
                'a catch-up of 366 days and a deadline of 1,000,000 days are accepted');
SELECT is((SELECT catchup FROM cyclone.cyclone_schedules WHERE name = 's'), interval '366 days', 'as given');

SELECT * FROM finish();
ROLLBACK;
