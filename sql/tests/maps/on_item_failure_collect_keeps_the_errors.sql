-- SPEC 16: on_item_failure "collect": the map waits for every item and completes with an array whose element
-- for a discarded item is {"error": e, "error_kind": k}; the run goes on.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.define('each', '[{"name": "each", "kind": "map", "over": "input.items",
                                      "on_item_failure": "collect", "max_attempts": 1}]');
SELECT cyclone.submit('each', '{"items": ["x", "y"]}') AS run \gset
CREATE TEMP TABLE claimed AS SELECT * FROM cyclone.claim('w1', NULL, 10);
SELECT cyclone.fail(step_id, 'w1', lease_generation, 'no y', 'error') FROM claimed WHERE item_index = 1;
SELECT is(cyclone_test.state(:'run', 'each'), 'waiting', 'a discarded item does not end the map');
SELECT cyclone.complete(step_id, 'w1', lease_generation, '"X"') FROM claimed WHERE item_index = 0;
SELECT is((cyclone_test.step(:'run', 'each')).output, '["X", {"error": "no y", "error_kind": "error"}]'::jsonb,
          'the discarded item''s element is its error');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'the run completes');

SELECT * FROM finish();
ROLLBACK;
