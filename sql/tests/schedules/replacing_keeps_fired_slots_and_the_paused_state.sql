-- SPEC 13: replacing a schedule keeps the slots already fired and the paused
-- state. A new cron starts at its first fire time after the later of the last
-- fired slot and now. The same cron and zone keep the next slot (documented in
-- docs/schedules.md): a worker that registers its schedules at every start
-- must not lose the slots an outage left due.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('sr') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:30+00');
SELECT cyclone.schedule('s', '@hourly', 'sr', '{"v": 1}', 'UTC', 'allow', '1 day');
SELECT cyclone_test.travel_to('2030-01-07 11:10+00');
SELECT cyclone.tick();
SELECT cyclone.pause_schedule('s');
SELECT cyclone_test.travel_to('2030-01-07 13:10+00');

SELECT cyclone.schedule('s', '@hourly', 'sr', '{"v": 2}', 'UTC', 'allow', '1 day');
SELECT results_eq($$SELECT paused, next_fire_at, last_slot FROM cyclone.cyclone_v_schedules$$,
                  $$VALUES (true, timestamptz '2030-01-07 12:00+00', timestamptz '2030-01-07 11:00+00')$$,
                  'same cron: still paused, the due 12:00 slot kept, the fired 11:00 slot kept');
SELECT cyclone.resume_schedule('s');
SELECT is((cyclone.tick() ->> 'scheduled')::int, 2, 'on resume 12:00 and 13:00 fire');
SELECT is((SELECT input ->> 'v' FROM cyclone.cyclone_runs WHERE input ->> 'scheduled_for' = '2030-01-07T13:00:00Z'),
          '2', 'with the new input');

SELECT cyclone.schedule('s', '*/15 * * * *', 'sr', '{}', 'UTC', 'allow', '1 day');
SELECT is((SELECT next_fire_at FROM cyclone.cyclone_v_schedules), timestamptz '2030-01-07 13:15+00',
          'a new cron: its first slot after now (13:10)');
SELECT is((cyclone.tick() ->> 'scheduled')::int, 0, 'the slots already fired do not fire again');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_schedule_runs), 3, 'and their runs are still counted');

-- Slots fired later than now (the clock of a replica that lags): a new cron
-- starts after the last fired slot.
UPDATE cyclone.cyclone_schedules SET last_slot = '2030-01-07 14:00+00';
SELECT cyclone.schedule('s', '@hourly', 'sr');
SELECT is((SELECT next_fire_at FROM cyclone.cyclone_v_schedules), timestamptz '2030-01-07 15:00+00',
          'after the later of the last fired slot and now');

SELECT * FROM finish();
ROLLBACK;
