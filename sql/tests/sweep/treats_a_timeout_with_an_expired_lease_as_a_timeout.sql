-- Past both its timeout and its lease expiry, a step is a timeout (attempt
-- charged), not a reclaim.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one', 3, '10 seconds') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1', '5 seconds') \gset
SELECT cyclone.advance_time('11 seconds') AS t1 \gset

SELECT is((SELECT action FROM cyclone.sweep()), 'retried', 'the step is retried, not reclaimed');
SELECT is((cyclone_test.step(:'run')).error_kind, 'timeout', 'as a timeout');
SELECT is((cyclone_test.step(:'run')).reclaims, 0, 'reclaims is not counted');
SELECT cyclone.advance_time('1 second') AS t2 \gset
SELECT is((SELECT attempt FROM cyclone.claim('w1', NULL, 10)), 2, 'the next claim is attempt 2');

SELECT * FROM finish();
ROLLBACK;
