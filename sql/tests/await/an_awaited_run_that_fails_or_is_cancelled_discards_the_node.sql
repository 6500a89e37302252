-- SPEC 17: the transaction that ends an awaited run that failed or was cancelled discards the await node with
-- error kind awaited_run_failed (a new kind); the node's failure policy applies.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('job', '[{"name": "go", "handler": "go"}]', 1);
SELECT cyclone_test.define('watcher', '[
    {"name": "done", "kind": "await", "run": "input.job"},
    {"name": "after", "handler": "after", "deps": ["done"], "on_dep_failure": "cancel_branch"},
    {"name": "other", "handler": "other"}]');
SELECT cyclone.submit('job') AS j1 \gset
SELECT cyclone.submit('job') AS j2 \gset
SELECT cyclone.submit('watcher', jsonb_build_object('job', :'j1')) AS w1 \gset
SELECT cyclone.submit('watcher', jsonb_build_object('job', :'j2')) AS w2 \gset
SELECT is(cyclone_test.state(:'w1', 'done'), 'waiting', 'a root await node waits from submit');

SELECT cyclone_test.fail_node(:'j1', 'go', 'permanent');
SELECT is(cyclone_test.run_state(:'j1'), 'failed', 'the awaited run failed');
SELECT is((cyclone_test.step(:'w1', 'done')).error_kind, 'awaited_run_failed', 'the await node was discarded as awaited_run_failed');
SELECT is(cyclone_test.state(:'w1', 'after'), 'cancelled', 'its failure policy applied (cancel_branch contains it)');

SELECT cyclone.cancel(:'j2', 'no longer needed');
SELECT is((cyclone_test.step(:'w2', 'done')).error, format('awaited run %s cancelled', :'j2'),
          'a cancelled run too, and the error says which run and how it ended');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
