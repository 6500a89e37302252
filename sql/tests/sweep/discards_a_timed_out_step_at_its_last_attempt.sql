BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('one', 2, '5 seconds') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT cyclone.advance_time('6 seconds') AS t1 \gset
SELECT is((SELECT action FROM cyclone.sweep()), 'retried', 'attempt 1 of 2 times out and is retried');

SELECT cyclone.advance_time('2 seconds') AS t2 \gset
SELECT is((SELECT attempt FROM cyclone_test.claim_node(:'run')), 2, 'attempt 2 is claimed');
SELECT cyclone.advance_time('6 seconds') AS t3 \gset
SELECT results_eq($$SELECT node, action FROM cyclone.sweep()$$,
                  $$VALUES ('work'::text, 'discarded'::text)$$, 'attempt 2 of 2 times out and is discarded');
SELECT is((cyclone_test.step(:'run')).error_kind, 'timeout', 'discarded as timeout');
SELECT is((cyclone_test.step(:'run')).finished_at, :'t3'::timestamptz, 'finished_at = now');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the single-step run failed');
SELECT is((SELECT error_kind FROM cyclone.get_run(:'run')), 'timeout', 'get_run reports timeout');

SELECT * FROM finish();
ROLLBACK;
