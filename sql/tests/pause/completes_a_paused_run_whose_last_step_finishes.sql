-- A run whose every step becomes terminal while paused is completed (a pause
-- only stops new claims); a failing in-flight step fails it the same way.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('pc', 1) \gset
SELECT cyclone.submit('pc') AS ok_run \gset
SELECT step_id AS ok_id, lease_generation AS ok_gen FROM cyclone_test.claim_node(:'ok_run') \gset
SELECT cyclone.pause(:'ok_run') \gset
SELECT is(cyclone.complete(:ok_id, 'w1', :ok_gen, '"done"'), true, 'the in-flight step completes');
SELECT results_eq(
    format($$SELECT state, paused_at, output FROM cyclone.cyclone_runs WHERE id = %L$$, :'ok_run'),
    $$VALUES ('completed', NULL::timestamptz, '{"work": "done"}'::jsonb)$$,
    'the paused run is completed, no longer paused, with its output');
SELECT is(cyclone.resume(:'ok_run'), false, 'there is nothing left to resume');

SELECT cyclone.submit('pc') AS bad_run \gset
SELECT step_id AS bad_id, lease_generation AS bad_gen FROM cyclone_test.claim_node(:'bad_run') \gset
SELECT cyclone.pause(:'bad_run') \gset
SELECT is(cyclone.fail(:bad_id, 'w1', :bad_gen, 'boom'), 'discarded', 'the in-flight step fails with no attempts left');
SELECT is(cyclone_test.run_state(:'bad_run'), 'failed', 'the paused run is failed');
SELECT is((cyclone.get_run(:'bad_run')).error_kind, 'error', 'by that step''s error');

SELECT * FROM finish();
ROLLBACK;
