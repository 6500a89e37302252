-- SPEC 13: a paused schedule fires nothing; on resume, the slots missed while
-- paused follow the catch-up rule. pause/resume are false when the schedule
-- is missing or already in that state.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('sp') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:23+00');
SELECT cyclone.schedule('hourly', '@hourly', 'sp', '{}', 'UTC', 'allow', '90 minutes');
SELECT ok(cyclone.pause_schedule('hourly'), 'paused');
SELECT ok(NOT cyclone.pause_schedule('hourly'), 'pausing again: false');
SELECT ok(NOT cyclone.pause_schedule('nope'), 'pausing a missing schedule: false');
SELECT is((SELECT paused FROM cyclone.cyclone_v_schedules), true, 'the view says paused');
SELECT cyclone_test.travel_to('2030-01-07 14:23+00');
SELECT is((cyclone.tick() ->> 'scheduled')::int, 0, 'four slots due while paused: nothing fires');
SELECT ok(cyclone.resume_schedule('hourly'), 'resumed');
SELECT ok(NOT cyclone.resume_schedule('hourly'), 'resuming again: false');
SELECT cyclone.tick() AS t \gset
SELECT is(:'t'::jsonb -> 'scheduled' || (:'t'::jsonb -> 'skipped_slots'), '[2, 2]'::jsonb,
          'missed 11:00-14:00: 13:00 and 14:00 are within 90 minutes, 11:00 and 12:00 are skipped');
SELECT results_eq($$SELECT scheduled_for FROM cyclone_test.schedule_runs('hourly')$$,
                  $$VALUES ('2030-01-07T13:00:00Z'), ('2030-01-07T14:00:00Z')$$, 'those two');

SELECT * FROM finish();
ROLLBACK;
