-- SPEC 13: a slot older than now - p_catchup when the tick sees it is skipped
-- (counted, never run), except the most recent due slot, so p_catchup = 0 runs
-- only the latest missed slot.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('so') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:23+00');
SELECT cyclone.schedule('two_hours', '@hourly', 'so', '{}', 'UTC', 'allow', '2 hours');
SELECT cyclone.schedule('latest_only', '@hourly', 'so', '{}', 'UTC', 'allow', '0');
SELECT cyclone.schedule('the_day', '@hourly', 'so', '{}', 'UTC', 'allow', '1 day');
-- Down from 10:23 to 15:23: slots 11:00 to 15:00 are due.
SELECT cyclone_test.travel_to('2030-01-07 15:23+00');
SELECT cyclone.tick() AS t \gset
SELECT is((:'t'::jsonb ->> 'scheduled')::int, 2 + 1 + 5, 'two hours: 14:00, 15:00; zero: 15:00; a day: all five');
SELECT is((:'t'::jsonb ->> 'skipped_slots')::int, 3 + 4, 'the rest skipped and counted');
SELECT results_eq($$SELECT scheduled_for FROM cyclone_test.schedule_runs('two_hours')$$,
                  $$VALUES ('2030-01-07T14:00:00Z'), ('2030-01-07T15:00:00Z')$$, '13:00 was older than 13:23');
SELECT results_eq($$SELECT scheduled_for FROM cyclone_test.schedule_runs('latest_only')$$,
                  $$VALUES ('2030-01-07T15:00:00Z')$$, 'catch-up 0: the latest missed slot only');
SELECT is((SELECT count(*)::int FROM cyclone_test.schedule_runs('the_day')), 5, 'within the window: every slot');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_schedules WHERE next_fire_at = '2030-01-07 16:00+00'), 3,
          'each schedule waits for 16:00');
SELECT is((SELECT cyclone.tick() ->> 'skipped_slots')::int, 0, 'skipped slots are not looked at again');

SELECT * FROM finish();
ROLLBACK;
