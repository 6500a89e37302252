-- A child run that finished long ago is kept while its parent run is still
-- live (the parent's history would otherwise point at nothing); once the
-- parent has finished and aged, both go.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('kid', 1) \gset
SELECT cyclone_test.define('mom', '[{"name": "c", "kind": "child", "workflow": "kid"}, {"name": "slow"}]') \gset
SELECT cyclone.submit('mom') AS run \gset
SELECT id AS child FROM cyclone.cyclone_runs WHERE parent_run_id = :'run' \gset
SELECT cyclone_test.run_node(:'child', 'work') \gset
SELECT is(cyclone_test.run_state(:'child'), 'completed', 'the child run completed');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'its parent is still running');

SELECT cyclone.advance_time('2 days') \gset
SELECT is(cyclone.prune('1 day'), 0, 'the old child of a live parent is kept');

SELECT cyclone_test.run_node(:'run', 'slow') \gset
SELECT cyclone.advance_time('2 days') \gset
SELECT is(cyclone.prune('1 day'), 2, 'once the parent has finished and aged, both are pruned');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'nothing is left');

SELECT * FROM finish();
ROLLBACK;
