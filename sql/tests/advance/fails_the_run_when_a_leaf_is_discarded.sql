-- A leaf (no dependents) that runs out of attempts fails the run; get_run
-- reports the error kind and error of that step.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('leafy', '[{"name":"a"},{"name":"b","deps":["a"]}]', 2) AS wf \gset
SELECT cyclone.submit('leafy') AS run \gset

SELECT ok(cyclone_test.run_node(:'run', 'a', '1'), 'a completes');
SELECT is(cyclone_test.fail_node(:'run', 'b', 'panic', '0 seconds'), 'available', 'b attempt 1 fails and is retried');
SELECT cyclone.advance_time('10 seconds') AS t1 \gset
SELECT * FROM cyclone_test.claim_node(:'run', 'b') \gset b_
SELECT is(:b_attempt, 2, 'b runs its last attempt');
SELECT is(cyclone.fail(:b_step_id, 'w1', :b_lease_generation, 'disk full', 'error'), 'discarded',
          'the last attempt of the leaf b is discarded');

SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run fails in the same transaction');
SELECT results_eq(
    format('SELECT state, error_kind, error, finished_at, output FROM cyclone.get_run(%L)', :'run'),
    format($$VALUES ('failed'::text, 'error'::text, 'disk full'::text, %L::timestamptz, NULL::jsonb)$$, :'t1'),
    'get_run: failed at the discard, with the error kind and error of b, no output');
SELECT is(cyclone_test.state(:'run', 'a'), 'completed', 'the completed step stays completed');
SELECT results_eq(format('SELECT node, error_kind FROM cyclone.cyclone_v_dlq WHERE run_id = %L', :'run'),
                  $$VALUES ('b'::text, 'error'::text)$$, 'b is in the dead-letter queue');

SELECT * FROM finish();
ROLLBACK;
