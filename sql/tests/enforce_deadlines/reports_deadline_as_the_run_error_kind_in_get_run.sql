-- get_run() reports a deadline failure as error_kind 'deadline', distinct from
-- an ordinary step failure.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('dlg', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]') \gset
SELECT cyclone.submit('dlg', '{}', '5 minutes') AS run \gset
SELECT cyclone_test.run_node(:'run', 'a') \gset
SELECT cyclone.advance_time('6 minutes') \gset
SELECT cyclone.enforce_deadlines() \gset

SELECT results_eq(
    format($$SELECT state, error_kind, error, finished_at, deadline_at FROM cyclone.get_run(%L)$$, :'run'),
    format($$VALUES ('failed', 'deadline', 'run deadline exceeded', %L::timestamptz, %L::timestamptz)$$,
           cyclone.now(), cyclone.now() - interval '1 minute'),
    'get_run: failed, error_kind deadline, error run deadline exceeded, deadline_at kept');
SELECT is((cyclone.get_run(:'run')).output, NULL, 'a failed run has no output');
SELECT is(cyclone_test.state(:'run', 'a'), 'completed', 'the step completed before the deadline stays completed');
SELECT is((cyclone_test.step(:'run', 'a')).error_kind, NULL, 'and carries no error kind');

SELECT * FROM finish();
ROLLBACK;
