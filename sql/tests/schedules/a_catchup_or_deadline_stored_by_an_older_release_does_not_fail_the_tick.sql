-- A catch-up or a deadline an older release stored beyond today's bounds counts as the bound (366 days,
-- 1,000,000 days): the tick fires the slot instead of failing with a raw 22008 for every worker. The
-- values are written directly, as that release let schedule() write them.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('sf') \gset
SELECT cyclone_test.travel_to('2030-01-07 00:30+00');
SELECT cyclone.schedule('hourly', '@hourly', 'sf');
UPDATE cyclone.cyclone_schedules SET catchup = '300000 years', deadline = '300000 years' WHERE name = 'hourly';
SELECT cyclone_test.travel_to('2030-01-07 03:30+00');

SELECT lives_ok($$SELECT cyclone.tick()$$, 'the tick answers');
SELECT is((SELECT count(*)::int FROM cyclone_test.schedule_runs('hourly')), 1,
          'the oldest due slot fired (01:00; overlap skip passed over 02:00 and 03:00)');
SELECT is((SELECT scheduled_for FROM cyclone_test.schedule_runs('hourly')), '2030-01-07T01:00:00Z',
          'a catch-up of 366 days still reaches back to 01:00');
SELECT is((SELECT deadline_at - created_at FROM cyclone.cyclone_runs), interval '1000000 days',
          'its deadline is the bound');

SELECT * FROM finish();
ROLLBACK;
