-- SPEC 16: items run with the map node's limits.
BEGIN;
SELECT plan(2);

SELECT cyclone.define_limit('two', 2);
SELECT cyclone_test.define('each', '[{"name": "each", "kind": "map", "over": "input.items",
                                      "limits": [{"name": "two"}]}]');
SELECT cyclone.submit('each', '{"items": [1, 2, 3, 4]}') AS run \gset
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 10)), 2, 'at most two items run at once');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w2', NULL, 10)), 0, 'the rest wait for a slot');

SELECT * FROM finish();
ROLLBACK;
