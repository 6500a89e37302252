-- SPEC 16: a run deadline discards the map node and its unfinished items with kind deadline (on_item_failure
-- does not apply); cancel treats items as steps; retry(run, node) on a discarded map node reopens its
-- discarded and cancelled items (completed items keep their outputs) and puts the map back to waiting; a run
-- with items is archived and its items kept.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.define('each', '[{"name": "each", "kind": "map", "over": "input.items"}]');
SELECT cyclone.submit('each', '{"items": [1, 2]}', '1 minute') AS late \gset
SELECT cyclone.advance_time('2 minutes');
SELECT cyclone.tick();
SELECT is(ARRAY(SELECT error_kind FROM cyclone.cyclone_steps WHERE run_id = :'late' ORDER BY item_index NULLS FIRST),
          ARRAY['deadline', 'deadline', 'deadline'], 'a deadline discards the map and its items as deadline');

SELECT cyclone.submit('each', '{"items": [1, 2]}') AS gone \gset
SELECT cyclone.cancel(:'gone');
SELECT is(ARRAY(SELECT state FROM cyclone.cyclone_steps WHERE run_id = :'gone' ORDER BY item_index NULLS FIRST),
          ARRAY['cancelled', 'cancelled', 'cancelled'], 'cancel cancels the items');

SELECT cyclone.submit('each', '{"items": ["a", "b", "c"]}') AS run \gset
CREATE TEMP TABLE claimed AS SELECT * FROM cyclone.claim('w1', NULL, 10) WHERE run_id = :'run';
SELECT cyclone.complete(step_id, 'w1', lease_generation, '"A"') FROM claimed WHERE item_index = 0;
SELECT cyclone.fail(step_id, 'w1', lease_generation, 'nope', 'permanent') FROM claimed WHERE item_index = 1;
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'an item failed the map and the run');
SELECT cyclone.retry(:'run', 'each');
SELECT is(cyclone_test.state(:'run', 'each'), 'waiting', 'retry puts the map back to waiting');
SELECT is(ARRAY(SELECT state FROM cyclone.cyclone_steps WHERE run_id = :'run' AND item_index IS NOT NULL
                 ORDER BY item_index), ARRAY['completed', 'available', 'available'],
          'its discarded and cancelled items are available again; the completed one is kept');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run is running again');
SELECT cyclone.complete(c.step_id, 'w1', c.lease_generation, to_jsonb(upper(c.item #>> '{}')))
  FROM cyclone.claim('w1', NULL, 10) c;
SELECT is((cyclone_test.step(:'run', 'each')).output, '["A", "B", "C"]'::jsonb, 'the map completes with every output');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'and the run');
SELECT cyclone.archive();
SELECT is((SELECT count(*)::int FROM ONLY cyclone.cyclone_steps WHERE run_id = :'run'), 0, 'archived');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'run' AND item_index IS NOT NULL), 3,
          'with its items, in the day table');

SELECT * FROM finish();
ROLLBACK;
