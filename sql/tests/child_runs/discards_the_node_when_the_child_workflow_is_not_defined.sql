-- A child node naming an undefined workflow is discarded as child_failed when
-- reached (no child run is created), which fails the parent.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('orphan', '[{"name": "c", "kind": "child", "workflow": "ghost"}, {"name": "t"}]') \gset
SELECT lives_ok($$SELECT cyclone.submit('orphan')$$, 'submit does not raise');
SELECT (SELECT id FROM cyclone.cyclone_runs WHERE workflow = 'orphan') AS run \gset

SELECT results_eq(
    format($$SELECT state, error_kind, child_run_id FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'c'$$, :'run'),
    $$VALUES ('discarded', 'child_failed', NULL::uuid)$$,
    'the child node is discarded as child_failed without a child run');
SELECT matches((cyclone_test.step(:'run', 'c')).error, 'ghost', 'the error names the missing workflow');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE parent_run_id = :'run'), 0, 'no child run exists');
SELECT results_eq(format($$SELECT state, error_kind FROM cyclone.get_run(%L)$$, :'run'),
                  $$VALUES ('failed', 'child_failed')$$, 'the parent failed with child_failed');

SELECT * FROM finish();
ROLLBACK;
