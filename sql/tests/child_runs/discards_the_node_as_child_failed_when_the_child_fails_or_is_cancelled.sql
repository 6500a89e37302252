-- The child's failure or cancellation discards the parent's child node with
-- error_kind child_failed, which fails the parent (fail_run by default).
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('kid', 1) \gset
SELECT cyclone_test.define('mom', '[{"name": "c", "kind": "child", "workflow": "kid"},
                                    {"name": "b", "deps": ["c"]}]') \gset

SELECT cyclone.submit('mom') AS run \gset
SELECT (cyclone_test.step(:'run', 'c')).child_run_id AS child \gset
SELECT is(cyclone_test.fail_node(:'child', 'work', 'permanent'), 'discarded', 'the child''s step is discarded');
SELECT is(cyclone_test.run_state(:'child'), 'failed', 'the child run failed');
SELECT results_eq(
    format($$SELECT node, state, error_kind FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node$$, :'run'),
    $$VALUES ('b', 'cancelled', 'cancelled'), ('c', 'discarded', 'child_failed')$$,
    'the child node is discarded as child_failed, its dependent cancelled');
SELECT results_eq(format($$SELECT state, error_kind FROM cyclone.get_run(%L)$$, :'run'),
                  $$VALUES ('failed', 'child_failed')$$, 'the parent failed with child_failed');

SELECT cyclone.submit('mom') AS run2 \gset
SELECT (cyclone_test.step(:'run2', 'c')).child_run_id AS child2 \gset
SELECT is(cyclone.cancel(:'child2', 'not needed'), true, 'the second child run is cancelled');
SELECT is((cyclone_test.step(:'run2', 'c')).error_kind, 'child_failed', 'its node is discarded as child_failed');
SELECT is(cyclone_test.run_state(:'run2'), 'failed', 'the second parent failed');

SELECT * FROM finish();
ROLLBACK;
