-- Two root child nodes, the first naming an undefined workflow: submit succeeds,
-- the first node is discarded (child_failed), the run fails, and the second node
-- is cancelled without ever submitting its child.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('kid') \gset
SELECT cyclone_test.define('two', '[{"name": "c1", "kind": "child", "workflow": "ghost"},
                                    {"name": "c2", "kind": "child", "workflow": "kid"}]') \gset
SELECT lives_ok($$SELECT cyclone.submit('two')$$, 'submit does not raise');
SELECT (SELECT id FROM cyclone.cyclone_runs WHERE workflow = 'two') AS run \gset

SELECT results_eq(
    format($$SELECT node, state, error_kind, child_run_id FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node$$, :'run'),
    $$VALUES ('c1', 'discarded', 'child_failed', NULL::uuid), ('c2', 'cancelled', 'cancelled', NULL::uuid)$$,
    'c1 is discarded, c2 cancelled before it was reached');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE workflow = 'kid'), 0, 'no child run was submitted');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run failed');

SELECT * FROM finish();
ROLLBACK;
