-- SPEC 16: on_item_failure "fail" (the default): the first item to be discarded cancels the items that are not
-- terminal and discards the map node with error kind item_failed and an error naming the item's index and its
-- error. Items never fail a run by themselves: get_run's failing step is the map node.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('each', '[{"name": "each", "kind": "map", "over": "input.items"}]');
SELECT cyclone.submit('each', '{"items": ["x", "y", "z"]}') AS run \gset
CREATE TEMP TABLE claimed AS SELECT * FROM cyclone.claim('w1', NULL, 10);
SELECT cyclone.complete(step_id, 'w1', lease_generation, '1') FROM claimed WHERE item_index = 0;
SELECT cyclone.fail(step_id, 'w1', lease_generation, 'bad y', 'permanent') FROM claimed WHERE item_index = 1;

SELECT is((SELECT state FROM cyclone.cyclone_steps WHERE run_id = :'run' AND item_index = 2), 'cancelled',
          'the unfinished item is cancelled');
SELECT is((SELECT state FROM cyclone.cyclone_steps WHERE run_id = :'run' AND item_index = 0), 'completed',
          'a completed item stays completed');
SELECT is((cyclone_test.step(:'run', 'each')).error_kind, 'item_failed', 'the map is discarded as item_failed');
SELECT is((cyclone_test.step(:'run', 'each')).error, 'item 1 failed (permanent): bad y', 'naming the item and its error');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the map''s policy fails the run');
SELECT is((SELECT error_kind FROM cyclone.get_run(:'run')), 'item_failed', 'get_run names the map, not the item');

SELECT * FROM finish();
ROLLBACK;
