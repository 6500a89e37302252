-- A step discarded by the reclaim limit gets its whole reclaim budget back from
-- an operator retry: reclaims = 0, and the next expired lease is reclaimed again.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.one_step('crashy', 3) AS wf \gset
SELECT cyclone.submit('crashy') AS run \gset

SELECT * FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') \gset c1_
SELECT cyclone.advance_time('11 seconds') AS t1 \gset
SELECT results_eq('SELECT action FROM cyclone.sweep(2)', $$VALUES ('reclaimed'::text)$$, 'first expired lease is reclaimed');
SELECT * FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') \gset c2_
SELECT cyclone.advance_time('11 seconds') AS t2 \gset
SELECT results_eq('SELECT action FROM cyclone.sweep(2)', $$VALUES ('reclaimed'::text)$$, 'second expired lease is reclaimed');
SELECT * FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') \gset c3_
SELECT cyclone.advance_time('11 seconds') AS t3 \gset
SELECT results_eq('SELECT action FROM cyclone.sweep(2)', $$VALUES ('discarded'::text)$$, 'the third is past the limit of 2');
SELECT results_eq(format('SELECT state, error_kind, reclaims, attempt FROM cyclone.cyclone_steps WHERE run_id = %L', :'run'),
                  $$VALUES ('discarded'::text, 'reclaim_limit'::text, 2, 1)$$, 'discarded as reclaim_limit after 2 reclaims, attempt 1');

SELECT lives_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'work'), 'retry');
SELECT results_eq(format('SELECT state, reclaims, error, error_kind FROM cyclone.cyclone_steps WHERE run_id = %L', :'run'),
                  $$VALUES ('available'::text, 0, NULL::text, NULL::text)$$, 'reclaims are reset and the error cleared');

SELECT * FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') \gset c4_
SELECT is(:c4_attempt, 2, 'the retried execution is attempt 2');
SELECT cyclone.advance_time('11 seconds') AS t4 \gset
SELECT results_eq('SELECT action FROM cyclone.sweep(2)', $$VALUES ('reclaimed'::text)$$,
                  'after the retry an expired lease is reclaimed again, not discarded');
SELECT * FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') \gset c5_
SELECT is(:c5_attempt, 2, 'a reclaim reruns the same attempt');
SELECT is((cyclone_test.step(:'run')).reclaims, 1, 'one reclaim spent of the renewed budget');

SELECT * FROM finish();
ROLLBACK;
