-- A child run that fails in the very transaction that creates it (its own child
-- node names an undefined workflow) still fails its parent's child node at once:
-- the parent never waits on a child that is already over.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('kid', '[{"name": "g", "kind": "child", "workflow": "ghost"}]') \gset
SELECT cyclone_test.define('mom', '[{"name": "c", "kind": "child", "workflow": "kid"}, {"name": "t"}]') \gset
SELECT cyclone.submit('mom') AS run \gset
SELECT (SELECT id FROM cyclone.cyclone_runs WHERE parent_run_id = :'run') AS child \gset

SELECT is(cyclone_test.run_state(:'child'), 'failed', 'the child run failed at once');
SELECT results_eq(
    format($$SELECT state, error_kind, child_run_id FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'c'$$, :'run'),
    format($$VALUES ('discarded', 'child_failed', %L::uuid)$$, :'child'),
    'the parent''s child node is discarded as child_failed, still naming its child');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the parent failed');
SELECT is(cyclone_test.state(:'run', 't'), 'cancelled', 'its other step is cancelled');

SELECT * FROM finish();
ROLLBACK;
