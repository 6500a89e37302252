-- Issue 30, finding 3: a step due at '-infinity' (submit's p_run_at, which an older release accepted) made
-- metrics() fail for everyone with 22008, so the exporter reported up 0 until the run was cancelled.
-- metrics() answers whatever times are stored, and every value it gives is a finite number: the ready lag
-- leaves such a step out (it has no number of seconds), a schedule whose next slot is 'infinity' has no
-- next-fire row. The times are written directly, as that release let submit write them.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('one') AS early \gset
SELECT cyclone.submit('one') AS never \gset
UPDATE cyclone.cyclone_steps SET scheduled_at = '-infinity' WHERE run_id = :'early';
UPDATE cyclone.cyclone_steps SET scheduled_at = 'infinity' WHERE run_id = :'never';
SELECT cyclone.schedule('done', '@daily', 'one');
UPDATE cyclone.cyclone_schedules SET next_fire_at = 'infinity' WHERE name = 'done';

SELECT lives_ok($$SELECT * FROM cyclone.metrics()$$, 'metrics() answers');
SELECT is((SELECT count(*)::int FROM cyclone.metrics() WHERE value IN ('Infinity', '-Infinity', 'NaN')), 0,
          'every value is a finite number');
SELECT is((SELECT value FROM cyclone.metrics() WHERE name = 'cyclone_ready_lag_seconds' AND labels ->> 'workflow' = 'one'),
          0::float8, 'the ready lag leaves the step due at -infinity out');
SELECT is((SELECT value FROM cyclone.metrics() WHERE name = 'cyclone_steps' AND labels ->> 'workflow' = 'one'
            AND labels ->> 'state' = 'available'), 2::float8, 'both steps are counted as available');
SELECT is((SELECT count(*)::int FROM cyclone.metrics() WHERE name = 'cyclone_schedule_next_fire_timestamp_seconds'), 0,
          'no next-fire row for a schedule that fires no more');

-- The lag still counts the finite due steps beside it.
SELECT cyclone.submit('one') AS due \gset
SELECT cyclone.advance_time('90 seconds');
SELECT is((SELECT value FROM cyclone.metrics() WHERE name = 'cyclone_ready_lag_seconds' AND labels ->> 'workflow' = 'one'),
          90::float8, 'a step due 90 seconds ago: lag 90');
SELECT is((SELECT step_id FROM cyclone.claim('w1', NULL, 1)), (cyclone_test.step(:'early')).id,
          'the step due at -infinity is claimed first');

SELECT * FROM finish();
ROLLBACK;
