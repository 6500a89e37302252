-- SPEC 13: a new schedule's first slot is the first fire time strictly after the
-- moment it is created; cyclone_v_schedules shows it with every column.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('sw') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:00+00');
SELECT lives_ok($$SELECT cyclone.schedule('hourly', '0 * * * *', 'sw')$$, 'schedule() with the defaults');
SELECT results_eq(
    $$SELECT name, cron, timezone, workflow, overlap, catchup, paused, next_fire_at, last_slot, last_run_id
        FROM cyclone.cyclone_v_schedules$$,
    $$VALUES ('hourly', '0 * * * *', 'UTC', 'sw', 'skip', interval '1 hour', false,
              timestamptz '2030-01-07 11:00+00', NULL::timestamptz, NULL::uuid)$$,
    'created at 10:00 sharp: the first slot is 11:00, not 10:00');
SELECT cyclone.schedule('berlin', '30 2 * * *', 'sw', '{"a": 1}', 'Europe/Berlin', 'allow', '0', '1 day');
SELECT is((SELECT next_fire_at FROM cyclone.cyclone_v_schedules WHERE name = 'berlin'),
          timestamptz '2030-01-08 01:30+00', 'wall-clock 02:30 in Berlin (UTC+1 in January)');
SELECT is((SELECT (overlap, catchup, deadline, input)::text FROM cyclone.cyclone_schedules WHERE name = 'berlin'),
          '(allow,00:00:00,"1 day","{""a"": 1}")', 'every argument is kept');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'scheduling submits nothing');

SELECT * FROM finish();
ROLLBACK;
