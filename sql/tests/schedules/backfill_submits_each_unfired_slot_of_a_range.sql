-- SPEC 13: backfill(name, from, to) submits every slot in [from, to) not yet
-- fired, with the same keys, overlap ignored, and returns how many runs it
-- created; from < to <= now, else 22023; an unknown schedule is P0002.
BEGIN;
SELECT plan(11);

SELECT cyclone_test.one_step('sf') \gset
SELECT cyclone_test.travel_to('2030-01-07 00:30+00');
SELECT cyclone.schedule('hourly', '@hourly', 'sf');  -- overlap skip: backfill ignores it
SELECT cyclone_test.travel_to('2030-01-07 06:30+00');
SELECT cyclone.tick();  -- catch-up 1 hour: 06:00 fires, 01:00-05:00 are skipped
SELECT is(cyclone.backfill('hourly', '2030-01-07 03:00+00', '2030-01-07 06:30+00'), 3,
          '[03:00, 06:30): 03:00, 04:00, 05:00 created; 06:00 had fired');
SELECT is(cyclone.backfill('hourly', '2030-01-07 00:00+00', '2030-01-07 06:00+00'), 3,
          '[00:00, 06:00): only 00:00 (before the schedule was made), 01:00 and 02:00 are new');
SELECT is(cyclone.backfill('hourly', '2030-01-07 00:00+00', '2030-01-07 06:30+00'), 0, 'again: none');
SELECT is((SELECT count(DISTINCT idempotency_key)::int FROM cyclone_test.schedule_runs('hourly')), 7,
          'seven slots, seven runs, seven keys');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE state = 'running'), 7, 'overlap skip did not apply');
SELECT is((SELECT last_slot FROM cyclone.cyclone_v_schedules), timestamptz '2030-01-07 06:00+00',
          'the last slot stays the latest one');
SELECT is(cyclone.backfill('hourly', '2030-01-07 06:01+00', '2030-01-07 06:30+00'), 0, 'a range with no slot: 0');

SELECT throws_ok($$SELECT cyclone.backfill('hourly', '2030-01-07 05:00+00', '2030-01-07 05:00+00')$$, '22023', NULL,
                 'from = to');
SELECT throws_ok($$SELECT cyclone.backfill('hourly', '2030-01-07 05:00+00', '2030-01-07 07:00+00')$$, '22023', NULL,
                 'to after now');
SELECT throws_ok($$SELECT cyclone.backfill('nope', '2030-01-07 05:00+00', '2030-01-07 06:00+00')$$, 'P0002',
                 'schedule "nope" not found', 'an unknown schedule');
SELECT cyclone.schedule('minutely', '* * * * *', 'sf');
SELECT throws_ok($$SELECT cyclone.backfill('minutely', '2029-12-31 00:00+00', '2030-01-07 06:00+00')$$, '22023', NULL,
                 'more than 10000 slots in one call');

SELECT * FROM finish();
ROLLBACK;
