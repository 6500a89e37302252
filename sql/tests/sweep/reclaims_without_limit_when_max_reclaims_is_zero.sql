BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('one', 1) AS wf \gset
SELECT cyclone.submit('one') AS run \gset

SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '1 second') IS NOT NULL AS c1 \gset
SELECT cyclone.advance_time('2 seconds') AS t1 \gset
SELECT is((SELECT action FROM cyclone.sweep(0)), 'reclaimed', 'reclaim 1 (p_max_reclaims 0)');
SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '1 second') IS NOT NULL AS c2 \gset
SELECT cyclone.advance_time('2 seconds') AS t2 \gset
SELECT is((SELECT action FROM cyclone.sweep(0)), 'reclaimed', 'reclaim 2');
SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '1 second') IS NOT NULL AS c3 \gset
SELECT cyclone.advance_time('2 seconds') AS t3 \gset
SELECT is((SELECT action FROM cyclone.sweep()), 'reclaimed', 'reclaim 3 (default p_max_reclaims)');
SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '1 second') IS NOT NULL AS c4 \gset
SELECT cyclone.advance_time('2 seconds') AS t4 \gset
SELECT is((SELECT action FROM cyclone.sweep(0)), 'reclaimed', 'reclaim 4');
SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '1 second') IS NOT NULL AS c5 \gset
SELECT cyclone.advance_time('2 seconds') AS t5 \gset
SELECT is((SELECT action FROM cyclone.sweep()), 'reclaimed', 'reclaim 5');

SELECT is((cyclone_test.step(:'run')).reclaims, 5, 'reclaims 5');
SELECT is((cyclone_test.step(:'run')).attempt, 1, 'still attempt 1 of 1: reclaims never charge an attempt');
SELECT is(cyclone_test.state(:'run'), 'available', 'and still available');

SELECT * FROM finish();
ROLLBACK;
