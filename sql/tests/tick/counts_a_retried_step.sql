-- A running step past its timeout with attempts left is retried by tick and
-- counted as retried.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('tt', 3, '10 seconds') \gset
SELECT cyclone.submit('tt') AS run \gset
SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '1 hour') \gset
SELECT cyclone.advance_time('11 seconds') \gset

SELECT is(cyclone.tick(),
          '{"reclaimed": 0, "retried": 1, "discarded": 0, "deadlines": 0, "max_wait": 0, "slept": 0, "scheduled": 0, "skipped_slots": 0, "archived": 0, "discarded_steps": []}'::jsonb,
          'one step retried');
SELECT results_eq(
    format($$SELECT state, error_kind, attempt, reclaims FROM cyclone.cyclone_steps WHERE run_id = %L$$, :'run'),
    $$VALUES ('available', 'timeout', 1, 0)$$,
    'the step is back to available with error_kind timeout');
SELECT ok((cyclone_test.step(:'run')).scheduled_at BETWEEN cyclone.now() + interval '0.5 seconds'
                                                       AND cyclone.now() + interval '1 second',
          'with the attempt-1 backoff (0.5 to 1 second)');

SELECT * FROM finish();
ROLLBACK;
