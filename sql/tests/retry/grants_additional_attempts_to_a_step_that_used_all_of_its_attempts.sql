-- A step that used 5 of 5 attempts, retried with 5 additional attempts, gets
-- max_attempts 10 and runs next as attempt 6; the error is cleared.
BEGIN;
SELECT plan(12);

SELECT cyclone_test.one_step('five', 5) AS wf \gset
SELECT cyclone.submit('five') AS run \gset

SELECT is(cyclone_test.fail_node(:'run', 'work', 'error', '0 seconds'), 'available', 'attempt 1 fails');
SELECT is(cyclone_test.fail_node(:'run', 'work', 'error', '0 seconds'), 'available', 'attempt 2 fails');
SELECT is(cyclone_test.fail_node(:'run', 'work', 'error', '0 seconds'), 'available', 'attempt 3 fails');
SELECT is(cyclone_test.fail_node(:'run', 'work', 'error', '0 seconds'), 'available', 'attempt 4 fails');
SELECT is(cyclone_test.fail_node(:'run', 'work', 'error', '0 seconds'), 'discarded', 'attempt 5 of 5 is discarded');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run failed');

SELECT cyclone.advance_time('1 day') AS t1 \gset
SELECT lives_ok(format('SELECT cyclone.retry(%L, %L, 5, %L)', :'run', 'work', 'upstream fixed'), 'retry with 5 more attempts');
SELECT results_eq(
    format($$SELECT state, attempt, max_attempts, error, error_kind, finished_at, scheduled_at
               FROM cyclone.cyclone_steps WHERE run_id = %L$$, :'run'),
    format($$VALUES ('available'::text, 5, 10, NULL::text, NULL::text, NULL::timestamptz, %L::timestamptz)$$, :'t1'),
    'the step is available now, attempt 5 of max 10, with its error cleared');
SELECT results_eq(format('SELECT state, finished_at, error_kind, error FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('running'::text, NULL::timestamptz, NULL::text, NULL::text)$$,
                  'the run is running again, with no error');

SELECT * FROM cyclone_test.claim_node(:'run') \gset c_
SELECT results_eq(format('VALUES (%s, %s)', :c_attempt, :c_max_attempts), 'VALUES (6, 10)',
                  'the next claim runs attempt 6 of 10');
SELECT is(cyclone.fail(:c_step_id, 'w1', :c_lease_generation, 'again', 'error', '0 seconds'), 'available',
          'attempt 6 failing is retried again: attempts remain');
SELECT ok(cyclone_test.run_node(:'run', 'work', '"ok"'), 'attempt 7 succeeds');

SELECT * FROM finish();
ROLLBACK;
