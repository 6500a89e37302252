-- A terminal run takes no signal, and keeps none.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('st', '[{"name": "a"}, {"name": "w", "kind": "wait", "signal": "go", "deps": ["a"]}]') \gset
SELECT cyclone.submit('st') AS cancelled_run \gset
SELECT cyclone.cancel(:'cancelled_run') \gset
SELECT is(cyclone.signal(:'cancelled_run', 'go'), false, 'a cancelled run refuses the signal');

SELECT cyclone.submit('st', '{}', '1 minute') AS failed_run \gset
SELECT cyclone.advance_time('2 minutes') \gset
SELECT cyclone.enforce_deadlines() \gset
SELECT is(cyclone_test.run_state(:'failed_run'), 'failed', 'the second run failed by its deadline');
SELECT is(cyclone.signal(:'failed_run', 'go'), false, 'a failed run refuses the signal');

SELECT cyclone_test.define('st2', '[{"name": "w", "kind": "wait", "signal": "go"}]') \gset
SELECT cyclone.submit('st2') AS completed_run \gset
SELECT cyclone.signal(:'completed_run', 'go') \gset
SELECT is(cyclone_test.run_state(:'completed_run'), 'completed', 'the third run completed on its signal');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_signals), 0, 'no signal was kept for any of them');

SELECT * FROM finish();
ROLLBACK;
