BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
CREATE TEMP TABLE before AS SELECT * FROM cyclone.cyclone_steps WHERE run_id = :'run';

SELECT ok(NOT cyclone.complete(:step_id, 'w2', :gen, '"x"'), 'another worker''s complete is false');
SELECT ok(NOT cyclone.complete(:step_id, 'w1', :gen + 1, '"x"'), 'a future generation is false');
SELECT ok(NOT cyclone.complete(:step_id, 'w1', :gen - 1, '"x"'), 'an older generation is false');
SELECT ok(NOT cyclone.complete(-1, 'w1', :gen, '"x"'), 'an unknown step id is false');
SELECT results_eq($$SELECT * FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM before)$$,
                  $$SELECT * FROM before$$, 'the refused completes changed nothing on the step');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run is still running');

SELECT ok(cyclone.complete(:step_id, 'w1', :gen, '"ok"'), 'the owner at the current generation completes');
SELECT is((cyclone_test.step(:'run')).output, '"ok"'::jsonb, 'with its own output');

SELECT * FROM finish();
ROLLBACK;
