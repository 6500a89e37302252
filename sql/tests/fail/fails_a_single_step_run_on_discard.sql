BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one', 1) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT cyclone.advance_time('2 seconds') AS t1 \gset

SELECT is(cyclone.fail(:step_id, 'w1', :gen, 'kaput'), 'discarded', 'attempt 1 of 1 is discarded');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run failed in the same transaction');
SELECT results_eq(format($$SELECT state, error_kind, error, finished_at FROM cyclone.get_run(%L)$$, :'run'),
                  format($$VALUES ('failed'::text, 'error'::text, 'kaput'::text, %L::timestamptz)$$, :'t1'),
                  'get_run reports the failure of the discarded step');
SELECT is((cyclone_test.step(:'run')).finished_at, :'t1'::timestamptz, 'the step finished now');
SELECT is((SELECT completed_at FROM cyclone.cyclone_v_steps WHERE run_id = :'run'), :'t1'::timestamptz,
          'cyclone_v_steps.completed_at is the discard time');
SELECT is((SELECT error_kind FROM cyclone.cyclone_v_dlq WHERE run_id = :'run'), 'error', 'the step is in the DLQ as error');

SELECT * FROM finish();
ROLLBACK;
