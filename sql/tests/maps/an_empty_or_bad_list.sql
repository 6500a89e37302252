-- SPEC 16: a root map fans out over input...; an empty array completes it at once with output []; a value that
-- is not an array, or holds more than max_items elements, discards the map with error kind bad_input and an
-- error saying which (the failure policy applies).
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('each', '[{"name": "each", "kind": "map", "over": "input.items", "max_items": 3}]');
SELECT cyclone.submit('each', '{"items": [1, 2]}') AS two \gset
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'two' AND item_index IS NOT NULL), 2,
          'a root map fans out at submit');
SELECT cyclone.submit('each', '{"items": []}') AS none \gset
SELECT is((cyclone_test.step(:'none', 'each')).output, '[]'::jsonb, 'an empty list completes the map with []');
SELECT is(cyclone_test.run_state(:'none'), 'completed', 'and the run');
SELECT cyclone.submit('each', '{"items": {"a": 1}}') AS obj \gset
SELECT is((cyclone_test.step(:'obj', 'each')).error_kind, 'bad_input', 'not an array: bad_input');
SELECT is((cyclone_test.step(:'obj', 'each')).error, 'map over input.items: expected a JSON array, found object',
          'saying what it found');
SELECT cyclone.submit('each', '{"items": [1, 2, 3, 4]}') AS many \gset
SELECT is((cyclone_test.step(:'many', 'each')).error, 'map over input.items: 4 elements, more than max_items 3',
          'more than max_items: bad_input saying so');
SELECT is(cyclone_test.run_state(:'many'), 'failed', 'the failure policy applies');

SELECT * FROM finish();
ROLLBACK;
