-- SPEC 13: unschedule is false for a missing schedule; the runs it made stay.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('su') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:00:30+00');
SELECT cyclone.schedule('s', '* * * * *', 'su');
SELECT cyclone.advance_time('1 minute');
SELECT cyclone.tick();
SELECT ok(cyclone.unschedule('s'), 'removed');
SELECT ok(NOT cyclone.unschedule('s'), 'removing again: false');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_schedules), 0, 'gone from the view');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE state = 'running'), 1, 'its run stays');

SELECT * FROM finish();
ROLLBACK;
