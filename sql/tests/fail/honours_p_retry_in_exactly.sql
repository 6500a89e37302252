BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one', 5) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT cyclone.advance_time('2 seconds') AS t1 \gset

SELECT is(cyclone.fail(:step_id, 'w1', :gen, 'rate limited', 'error', '42 seconds'), 'available', 'fail returns available');
SELECT is((cyclone_test.step(:'run')).scheduled_at, :'t1'::timestamptz + interval '42 seconds',
          'scheduled_at = now + p_retry_in exactly (no jitter)');
SELECT cyclone.advance_time('41.999 seconds') AS t2 \gset
SELECT is_empty($$SELECT * FROM cyclone.claim('w1', NULL, 10)$$, 'not claimable 1 ms early');
SELECT cyclone.advance_time('1 millisecond') AS t3 \gset
SELECT is((SELECT attempt FROM cyclone.claim('w1', NULL, 10)), 2, 'claimable at now + p_retry_in as attempt 2');

SELECT * FROM finish();
ROLLBACK;
