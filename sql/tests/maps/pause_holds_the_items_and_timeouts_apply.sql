-- SPEC 16: pause treats items as steps (a paused run's items are not claimed); an item runs with the map's
-- timeout, which the sweep enforces like a task's.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('each', '[{"name": "each", "kind": "map", "over": "input.items", "timeout": "10 seconds",
                                      "max_attempts": 1}]');
SELECT cyclone.submit('each', '{"items": [1, 2]}') AS run \gset
SELECT cyclone.pause(:'run');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 10)), 0, 'a paused run''s items are not claimed');
SELECT cyclone.resume(:'run');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 10, '1 hour')), 2, 'resumed, they are');
SELECT cyclone.advance_time('11 seconds');
SELECT cyclone.tick();
SELECT is((SELECT error_kind FROM cyclone.cyclone_steps WHERE run_id = :'run' AND item_index = 0), 'timeout',
          'an item past the map''s timeout is failed as timeout by the sweep');
SELECT is(cyclone_test.state(:'run', 'each'), 'discarded', 'and its discard fails the map (on_item_failure fail)');

SELECT * FROM finish();
ROLLBACK;
