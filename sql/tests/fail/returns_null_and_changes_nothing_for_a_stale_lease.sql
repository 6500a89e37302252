BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('one', 5) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
CREATE TEMP TABLE before AS SELECT * FROM cyclone.cyclone_steps WHERE run_id = :'run';

SELECT is(cyclone.fail(:step_id, 'w1', :gen - 1, 'boom'), NULL, 'an older generation returns NULL');
SELECT is(cyclone.fail(:step_id, 'w1', :gen + 1, 'boom', 'permanent'), NULL, 'a future generation returns NULL, even permanent');
SELECT is(cyclone.fail(:step_id, 'w2', :gen, 'boom'), NULL, 'another worker returns NULL');
SELECT is(cyclone.fail(-1, 'w1', :gen, 'boom'), NULL, 'an unknown step returns NULL');
SELECT results_eq($$SELECT * FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM before)$$,
                  $$SELECT * FROM before$$, 'the refused fails changed nothing');

SELECT ok(cyclone.complete(:step_id, 'w1', :gen, '"done"'), 'the owner completes');
SELECT is(cyclone.fail(:step_id, 'w1', :gen, 'late'), NULL, 'a fail after the complete returns NULL');
SELECT ok(cyclone_test.state(:'run') = 'completed' AND (cyclone_test.step(:'run')).error IS NULL,
          'the step stays completed with no error');

SELECT * FROM finish();
ROLLBACK;
