BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('one', 5) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT cyclone.advance_time('2 seconds') AS t1 \gset

SELECT is(cyclone.fail(:step_id, 'w1', :gen, 'no such customer', 'permanent', '1 second'), 'discarded',
          'a permanent failure is discarded at attempt 1 of 5, p_retry_in notwithstanding');
SELECT is(cyclone_test.state(:'run'), 'discarded', 'the step is discarded');
SELECT is((cyclone_test.step(:'run')).error_kind, 'permanent', 'error_kind permanent');
SELECT is((cyclone_test.step(:'run')).error, 'no such customer', 'the error is stored');
SELECT is((cyclone_test.step(:'run')).attempt, 1, 'attempt stays 1');
SELECT is((cyclone_test.step(:'run')).finished_at, :'t1'::timestamptz, 'finished_at = now');
SELECT ok((cyclone_test.step(:'run')).lease_owner IS NULL AND (cyclone_test.step(:'run')).lease_expiry IS NULL,
          'the lease is cleared');
SELECT cyclone.advance_time('1 hour') AS t2 \gset
SELECT is_empty($$SELECT * FROM cyclone.claim('w1', NULL, 10)$$, 'never claimed again');
SELECT is((SELECT node FROM cyclone.cyclone_v_dlq WHERE run_id = :'run'), 'work', 'the step is in the dead-letter queue');

SELECT * FROM finish();
ROLLBACK;
