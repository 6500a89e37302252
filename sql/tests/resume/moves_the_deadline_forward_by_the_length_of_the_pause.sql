-- A 30-minute deadline, paused at minute 10 for an hour: after resume the run
-- has its 20 minutes left, not one second more or less.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.one_step('rd') \gset
SELECT cyclone.submit('rd', '{}', '30 minutes') AS run \gset
SELECT (SELECT deadline_at FROM cyclone.cyclone_runs WHERE id = :'run') AS original_deadline \gset

SELECT cyclone.advance_time('10 minutes') \gset
SELECT is(cyclone.pause(:'run'), true, 'paused at minute 10');
SELECT cyclone.advance_time('1 hour') \gset
SELECT is(cyclone.resume(:'run'), true, 'resumed an hour later');
SELECT results_eq(
    format($$SELECT state, paused_at, deadline_at FROM cyclone.cyclone_runs WHERE id = %L$$, :'run'),
    format($$VALUES ('running', NULL::timestamptz, %L::timestamptz)$$, cyclone.now() + interval '20 minutes'),
    'running again, no longer paused, deadline 20 minutes from now');
SELECT is((cyclone.get_run(:'run')).deadline_at, :'original_deadline'::timestamptz + interval '1 hour',
          'the deadline moved forward by exactly the pause');

SELECT cyclone.advance_time('20 minutes' - interval '1 second') \gset
SELECT is_empty($$SELECT cyclone.enforce_deadlines()$$, 'one second before the remaining 20 minutes: nothing');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'still running');
SELECT is(cyclone_test.state(:'run'), 'available', 'its step still available');

SELECT cyclone.advance_time('2 seconds') \gset
SELECT results_eq($$SELECT cyclone.enforce_deadlines()$$, ARRAY[:'run'::uuid], 'one second after: the deadline fires');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run is failed');
SELECT is((cyclone.get_run(:'run')).error_kind, 'deadline', 'by its deadline');

SELECT * FROM finish();
ROLLBACK;
