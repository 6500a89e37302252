-- SPEC 16: a pause freezes a sleep like max_wait: a paused run's sleep is not woken, and resume moves its wake
-- time forward by the pause. The run deadline applies to a sleep.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('nap', '[{"name": "z", "kind": "sleep", "duration": "1 hour"}]');
SELECT cyclone.submit('nap') AS run \gset
SELECT cyclone.advance_time('30 minutes');
SELECT cyclone.pause(:'run');
SELECT cyclone.advance_time('2 hours');
SELECT is((cyclone.tick() ->> 'slept')::int, 0, 'a paused run''s sleep is not woken');
SELECT cyclone.resume(:'run');
SELECT is((cyclone_test.step(:'run', 'z')).scheduled_at, cyclone.now() + interval '30 minutes',
          'resume moves the wake time forward by the pause');
SELECT cyclone.advance_time('30 minutes');
SELECT is((cyclone.tick() ->> 'slept')::int, 1, 'it wakes once the rest of its sleep has passed');

SELECT cyclone.submit('nap', '{}', '10 minutes') AS short \gset
SELECT cyclone.advance_time('11 minutes');
SELECT cyclone.tick();
SELECT is((cyclone_test.step(:'short', 'z')).error_kind, 'deadline', 'the run deadline discards a sleep');
SELECT is(cyclone_test.run_state(:'short'), 'failed', 'and fails the run');

SELECT * FROM finish();
ROLLBACK;
