-- A step past started_at + timeout is a failed execution of kind timeout even
-- though its lease is still valid: retried with backoff, attempt charged.
BEGIN;
SELECT plan(13);

SELECT cyclone_test.one_step('one', 3, '10 seconds') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1', '60 seconds') \gset

SELECT cyclone.advance_time('10 seconds') AS t1 \gset
SELECT is_empty($$SELECT * FROM cyclone.sweep()$$, 'at exactly started_at + timeout nothing is swept yet');
SELECT cyclone.advance_time('1 millisecond') AS t2 \gset
SELECT results_eq($$SELECT step_id, run_id, node, action FROM cyclone.sweep()$$,
                  format($$VALUES (%s::bigint, %L::uuid, 'work'::text, 'retried'::text)$$, :step_id, :'run'),
                  'just past the timeout, with 49 s of lease left, the step is retried');
SELECT is(cyclone_test.state(:'run'), 'available', 'the step is available again');
SELECT is((cyclone_test.step(:'run')).error_kind, 'timeout', 'error_kind timeout');
SELECT isnt((cyclone_test.step(:'run')).error, NULL, 'an error text is recorded');
SELECT ok((cyclone_test.step(:'run')).lease_owner IS NULL AND (cyclone_test.step(:'run')).lease_expiry IS NULL,
          'the lease is cleared');
SELECT ok((cyclone_test.step(:'run')).scheduled_at BETWEEN :'t2'::timestamptz + interval '0.5 seconds'
                                                        AND :'t2'::timestamptz + interval '1 second',
          'backoff(1) applies: scheduled_at within now + [0.5 s, 1 s]');
SELECT is((cyclone_test.step(:'run')).reclaims, 0, 'a timeout is not a reclaim');
SELECT is_empty($$SELECT * FROM cyclone.claim('w2', NULL, 10)$$, 'not claimable during the backoff');
SELECT ok(NOT cyclone.renew(:step_id, 'w1', :gen), 'the timed-out worker''s renew is false');

SELECT cyclone.advance_time('1 second') AS t3 \gset
SELECT step_id AS s2, attempt AS attempt2, lease_generation AS gen2 FROM cyclone.claim('w2', NULL, 10) \gset
SELECT is(:attempt2, 2, 'the attempt was charged: the next claim is attempt 2');
SELECT is((cyclone_test.step(:'run')).started_at, :'t3'::timestamptz, 'the new execution has a fresh started_at');
SELECT is_empty($$SELECT * FROM cyclone.sweep()$$, 'the new execution is not timed out');

SELECT * FROM finish();
ROLLBACK;
