-- A pause stops new claims only: an in-flight execution may finish and its
-- result counts, and a run whose steps are all done completes while paused.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT ok(cyclone.pause(:'run'), 'the run is paused mid-execution');

SELECT ok(cyclone.complete(:step_id, 'w1', :gen, '{"n": 1}'), 'the in-flight step completes');
SELECT is(cyclone_test.state(:'run'), 'completed', 'the step is completed');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'the paused run completes, every step being terminal');

SELECT * FROM finish();
ROLLBACK;
