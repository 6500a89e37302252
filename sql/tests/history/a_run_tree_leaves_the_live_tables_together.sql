-- A finished child run stays live while its parent is live, and a finished run
-- with a live child stays too: a tree is archived once all of it is done.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('kid', 1) \gset
SELECT cyclone_test.define('mom', '[{"name": "c", "kind": "child", "workflow": "kid"}, {"name": "slow"}]') \gset
SELECT cyclone.submit('mom') AS run \gset
SELECT id AS child FROM cyclone.cyclone_runs WHERE parent_run_id = :'run' \gset
SELECT cyclone_test.run_node(:'child', 'work') \gset
SELECT is(cyclone.archive(), 0, 'a finished child of a live parent stays');
SELECT cyclone_test.run_node(:'run', 'slow') \gset
SELECT is(cyclone.archive(), 2, 'once the parent is done, both go');
SELECT is(cyclone_test.archived(:'child'), true, 'the child is archived');

-- A failed child fails its parent; an operator retries the child run alone.
SELECT cyclone.submit('mom') AS run2 \gset
SELECT id AS child2 FROM cyclone.cyclone_runs WHERE parent_run_id = :'run2' \gset
SELECT cyclone_test.fail_node(:'child2', 'work', 'permanent') \gset
SELECT is(cyclone_test.run_state(:'run2'), 'failed', 'the parent failed with its child');
SELECT cyclone.retry(:'child2', 'work', 1) \gset
SELECT is(cyclone_test.run_state(:'child2'), 'running', 'the retried child runs');
SELECT is(cyclone.archive(), 0, 'a finished parent with a live child stays, and so does the child');
SELECT is(cyclone_test.archived(:'run2'), false, 'the parent is still live');

SELECT * FROM finish();
ROLLBACK;
