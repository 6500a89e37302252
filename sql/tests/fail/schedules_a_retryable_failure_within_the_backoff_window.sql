-- A retryable failure returns the step to available at now + backoff(attempt):
-- attempt 1 within [0.5 s, 1 s], attempt 2 within [1 s, 2 s]. The lease is
-- cleared, error and error_kind are stored, and the next claim is attempt + 1.
BEGIN;
SELECT plan(15);

SELECT cyclone_test.one_step('one', 5) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT cyclone.advance_time('2 seconds') AS t1 \gset

SELECT is(cyclone.fail(:step_id, 'w1', :gen, 'card declined'), 'available', 'fail returns available');
SELECT is(cyclone_test.state(:'run'), 'available', 'the step is available');
SELECT ok((cyclone_test.step(:'run')).scheduled_at BETWEEN :'t1'::timestamptz + interval '0.5 seconds'
                                                        AND :'t1'::timestamptz + interval '1 second',
          'attempt 1: scheduled_at within now + [0.5 s, 1 s]');
SELECT is((cyclone_test.step(:'run')).error, 'card declined', 'error is stored');
SELECT is((cyclone_test.step(:'run')).error_kind, 'error', 'error_kind defaults to error');
SELECT ok((cyclone_test.step(:'run')).lease_owner IS NULL AND (cyclone_test.step(:'run')).lease_expiry IS NULL,
          'the lease is cleared');
SELECT is((cyclone_test.step(:'run')).attempt, 1, 'the attempt number is not bumped before the next claim');
SELECT is((cyclone_test.step(:'run')).finished_at, NULL, 'a retried step has no finished_at');

SELECT cyclone.advance_time('0.499 seconds') AS t2 \gset
SELECT is_empty($$SELECT * FROM cyclone.claim('w1', NULL, 10)$$, 'not claimable before the backoff');
SELECT cyclone.advance_time('0.501 seconds') AS t3 \gset
SELECT step_id AS s2, lease_generation AS gen2, attempt AS attempt2 FROM cyclone.claim('w1', NULL, 10) \gset
SELECT is(:attempt2, 2, 'claimable within 1 s, as attempt 2');
SELECT is(:gen2::bigint, :gen::bigint + 1, 'with a new lease generation');

SELECT is(cyclone.fail(:step_id, 'w1', :gen2, 'still declined', 'panic'), 'available', 'a panic is retryable too');
SELECT ok((cyclone_test.step(:'run')).scheduled_at BETWEEN :'t3'::timestamptz + interval '1 second'
                                                        AND :'t3'::timestamptz + interval '2 seconds',
          'attempt 2: scheduled_at within now + [1 s, 2 s]');
SELECT is((cyclone_test.step(:'run')).error_kind, 'panic', 'error_kind panic is stored');
SELECT is((cyclone_test.step(:'run')).error, 'still declined', 'the latest error replaces the previous one');

SELECT * FROM finish();
ROLLBACK;
