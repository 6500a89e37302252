BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one', 5) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT cyclone.advance_time('2 seconds') AS t1 \gset

SELECT is(cyclone.fail(:step_id, 'w1', :gen, 'boom', 'error', '0 seconds'), 'available', 'fail returns available');
SELECT is((cyclone_test.step(:'run')).scheduled_at, :'t1'::timestamptz, 'scheduled_at = now');
SELECT results_eq($$SELECT attempt, lease_generation FROM cyclone.claim('w1', NULL, 10)$$,
                  $$VALUES (2, 2::bigint)$$, 'claimable at once, as attempt 2');

SELECT * FROM finish();
ROLLBACK;
