-- A child run archived with its parent stays when the parent is retried back
-- to life and the child's day is dropped: it returns to the live table.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('kid', 1) \gset
SELECT cyclone_test.define('mom', '[{"name": "c", "kind": "child", "workflow": "kid"}, {"name": "last", "deps": ["c"]}]', 1) \gset
SELECT cyclone_test.travel_to('2030-05-01 10:00+00') \gset
SELECT cyclone.submit('mom') AS run \gset
SELECT id AS child FROM cyclone.cyclone_runs WHERE parent_run_id = :'run' \gset
SELECT cyclone_test.run_node(:'child', 'work') \gset
SELECT cyclone_test.fail_node(:'run', 'last') \gset
SELECT is(cyclone.archive(), 2, 'the failed parent and its child are archived');

SELECT cyclone_test.travel_to('2030-05-05 10:00+00') \gset
SELECT cyclone.retry(:'run', 'last', 1) \gset
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the parent runs again');
SELECT is(cyclone.prune('1 day'), 0, 'prune drops May 1 but removes no run');
SELECT is(cyclone_test.archived(:'child'), false, 'the child is back in the live table');
SELECT is(to_regclass('cyclone.cyclone_runs_2030_05_01'), NULL, 'and its day is gone');

SELECT * FROM finish();
ROLLBACK;
