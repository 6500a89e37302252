-- A run that reached a terminal state before its deadline is never touched by
-- the deadline scanner.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('dlc') \gset
SELECT cyclone.submit('dlc', '{}', '10 minutes') AS run \gset
SELECT cyclone.advance_time('9 minutes') \gset
SELECT is(cyclone_test.run_node(:'run', 'work', '{"ok": true}'), true, 'the step completes in time');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'the run is completed');
SELECT cyclone.now() AS done_at \gset

SELECT cyclone.advance_time('1 hour') \gset
SELECT is_empty($$SELECT cyclone.enforce_deadlines()$$, 'the deadline scanner skips it');
SELECT results_eq(
    format($$SELECT state, error_kind, output, finished_at FROM cyclone.get_run(%L)$$, :'run'),
    format($$VALUES ('completed', NULL::text, '{"work": {"ok": true}}'::jsonb, %L::timestamptz)$$, :'done_at'),
    'the run stays completed with its output and finish time');
SELECT is(cyclone_test.state(:'run'), 'completed', 'its step stays completed');
SELECT is((cyclone_test.step(:'run')).error, NULL, 'with no error');

SELECT * FROM finish();
ROLLBACK;
