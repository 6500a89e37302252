-- A run's audit rows and step errors stay where clients read them when the run
-- is archived, and go when it is pruned.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('flaky', 2) \gset
SELECT cyclone.submit('flaky') AS run \gset
SELECT cyclone.pause(:'run') \gset
SELECT cyclone.resume(:'run') \gset
SELECT cyclone_test.fail_node(:'run', 'work', 'error', '0 seconds') \gset
SELECT cyclone_test.fail_node(:'run', 'work') \gset
SELECT is(cyclone.archive(), 1, 'the failed run is archived');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_step_errors WHERE run_id = :'run'), 2, 'both errors are kept');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_audit WHERE run_id = :'run'), 2, 'both audit rows are kept');

SELECT cyclone.advance_time('3 days') \gset
SELECT is(cyclone.prune('1 day'), 1, 'the run is pruned');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_step_errors WHERE run_id = :'run'), 0, 'its errors with it');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_audit WHERE run_id = :'run'), 0, 'and its audit rows');

SELECT * FROM finish();
ROLLBACK;
