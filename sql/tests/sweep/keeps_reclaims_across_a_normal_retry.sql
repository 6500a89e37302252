-- reclaims survives a normal retry: reclaim, fail (error), reclaim -> 2; with
-- p_max_reclaims 2 the next expiry is the limit.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('one', 5) AS wf \gset
SELECT cyclone.submit('one') AS run \gset

SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') IS NOT NULL AS c1 \gset
SELECT cyclone.advance_time('11 seconds') AS t1 \gset
SELECT is((SELECT action FROM cyclone.sweep(2)), 'reclaimed', 'first expiry is reclaimed');

SELECT is(cyclone_test.fail_node(:'run', 'work', 'error', '0 seconds'), 'available', 'the re-run fails with error and is retried');
SELECT is((cyclone_test.step(:'run')).reclaims, 1, 'the retry kept reclaims at 1');

SELECT is((SELECT attempt FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds')), 2, 'attempt 2 is claimed');
SELECT cyclone.advance_time('11 seconds') AS t2 \gset
SELECT is((SELECT action FROM cyclone.sweep(2)), 'reclaimed', 'second expiry is reclaimed');
SELECT is((cyclone_test.step(:'run')).reclaims, 2, 'reclaims 2');

SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') IS NOT NULL AS c3 \gset
SELECT cyclone.advance_time('11 seconds') AS t3 \gset
SELECT is((SELECT action FROM cyclone.sweep(2)), 'discarded', 'the third expiry hits the limit of 2');

SELECT * FROM finish();
ROLLBACK;
