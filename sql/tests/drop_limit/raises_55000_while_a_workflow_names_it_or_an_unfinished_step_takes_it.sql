-- SPEC 12: drop_limit raises 55000 while a workflow definition names the limit
-- (at workflow or node level) or a non-terminal step takes it.
BEGIN;
SELECT plan(6);

SELECT cyclone.define_limit('l', 1);
SELECT cyclone.define_workflow('wf_level', '{"limits": [{"name": "l"}], "nodes": [{"name": "work"}]}');
SELECT throws_ok($$SELECT cyclone.drop_limit('l')$$, '55000', NULL, 'named at workflow level');
SELECT cyclone.define_workflow('wf_level', '{"nodes": [{"name": "work"}]}');
SELECT cyclone_test.limited('node_level', '[{"name": "l", "key": "t"}]');
SELECT throws_ok($$SELECT cyclone.drop_limit('l')$$, '55000', NULL, 'named at node level');
SELECT cyclone.submit('node_level', '{"t": "x"}') AS run \gset
SELECT cyclone.define_workflow('node_level', '{"nodes": [{"name": "work"}]}');
SELECT throws_ok($$SELECT cyclone.drop_limit('l')$$, '55000', NULL, 'an available step takes it');
SELECT cyclone_test.claim_node(:'run') \gset
SELECT throws_ok($$SELECT cyclone.drop_limit('l')$$, '55000', NULL, 'a running step takes it');
SELECT cyclone.cancel(:'run');
SELECT is(cyclone.drop_limit('l'), true, 'once the step is cancelled it can be dropped');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_slots), 0, 'no slot is left behind');

SELECT * FROM finish();
ROLLBACK;
