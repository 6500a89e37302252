-- Reclaim: state available, lease_owner and lease_expiry NULL, scheduled_at
-- unchanged, attempt not charged, no backoff, reclaims + 1; the next claim runs
-- the same attempt number, at once.
BEGIN;
SELECT plan(14);

SELECT cyclone_test.one_step('one', 3) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT (cyclone_test.step(:'run')).scheduled_at AS sched0 \gset
SELECT cyclone.advance_time('5 seconds') AS t0 \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1', '30 seconds') \gset

SELECT cyclone.advance_time('30 seconds') AS t1 \gset
SELECT is_empty($$SELECT * FROM cyclone.sweep()$$, 'at exactly lease_expiry the lease is not yet expired');
SELECT cyclone.advance_time('1 millisecond') AS t2 \gset
SELECT results_eq($$SELECT step_id, run_id, node, action FROM cyclone.sweep()$$,
                  format($$VALUES (%s::bigint, %L::uuid, 'work'::text, 'reclaimed'::text)$$, :step_id, :'run'),
                  'just past lease_expiry the step is reclaimed');
SELECT is(cyclone_test.state(:'run'), 'available', 'state available');
SELECT is((cyclone_test.step(:'run')).lease_owner, NULL, 'lease_owner NULL');
SELECT is((cyclone_test.step(:'run')).lease_expiry, NULL, 'lease_expiry NULL');
SELECT is((cyclone_test.step(:'run')).scheduled_at, :'sched0'::timestamptz, 'scheduled_at unchanged (no backoff)');
SELECT is((cyclone_test.step(:'run')).attempt, 1, 'attempt not charged');
SELECT is((cyclone_test.step(:'run')).reclaims, 1, 'reclaims + 1');
SELECT ok((cyclone_test.step(:'run')).error IS NULL AND (cyclone_test.step(:'run')).error_kind IS NULL,
          'a reclaim is not a failure: no error recorded');
SELECT is_empty($$SELECT * FROM cyclone.sweep()$$, 'a second sweep finds nothing');

SELECT results_eq($$SELECT attempt, lease_generation FROM cyclone.claim('w2', NULL, 10)$$,
                  format($$VALUES (1, %s::bigint)$$, :gen + 1),
                  'claimable at once, as the same attempt 1, with a new generation');
SELECT cyclone.advance_time('1 second') AS t3 \gset
SELECT is(cyclone.fail((cyclone_test.step(:'run')).id, 'w2', :gen + 1, 'boom', 'error', '0 seconds'), 'available',
          'the re-run fails normally');
SELECT is((SELECT attempt FROM cyclone.claim('w2', NULL, 10)), 2, 'and the claim after that failure is attempt 2');
SELECT is((cyclone_test.step(:'run')).reclaims, 1, 'reclaims is kept');

SELECT * FROM finish();
ROLLBACK;
