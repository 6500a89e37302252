-- p_max_reclaims = 2: two reclaims, then the third expiry discards the step as
-- reclaim_limit with no attempt charged and reclaims left at 2.
BEGIN;
SELECT plan(13);

SELECT cyclone_test.one_step('one', 5) AS wf \gset
SELECT cyclone.submit('one') AS run \gset

SELECT is((SELECT attempt FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds')), 1, 'claim 1: attempt 1');
SELECT cyclone.advance_time('11 seconds') AS t1 \gset
SELECT is((SELECT action FROM cyclone.sweep(2)), 'reclaimed', 'expiry 1: reclaimed');
SELECT is((cyclone_test.step(:'run')).reclaims, 1, 'reclaims 1');

SELECT is((SELECT attempt FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds')), 1, 'claim 2: attempt 1 again');
SELECT cyclone.advance_time('11 seconds') AS t2 \gset
SELECT is((SELECT action FROM cyclone.sweep(2)), 'reclaimed', 'expiry 2: reclaimed');
SELECT is((cyclone_test.step(:'run')).reclaims, 2, 'reclaims 2');

SELECT step_id, lease_generation AS gen, attempt AS attempt3 FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') \gset
SELECT is(:attempt3, 1, 'claim 3: attempt 1 again');
SELECT cyclone.advance_time('11 seconds') AS t3 \gset
SELECT results_eq($$SELECT node, action FROM cyclone.sweep(2)$$, $$VALUES ('work'::text, 'discarded'::text)$$,
                  'expiry 3: discarded');
SELECT is((cyclone_test.step(:'run')).error_kind, 'reclaim_limit', 'error_kind reclaim_limit');
SELECT is((cyclone_test.step(:'run')).attempt, 1, 'no attempt charged');
SELECT is((cyclone_test.step(:'run')).reclaims, 2, 'reclaims stays at p_max_reclaims');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run failed');
SELECT is((SELECT error_kind FROM cyclone.get_run(:'run')), 'reclaim_limit', 'get_run reports reclaim_limit');

SELECT * FROM finish();
ROLLBACK;
