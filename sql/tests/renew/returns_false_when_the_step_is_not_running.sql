BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT ok(cyclone.complete(:step_id, 'w1', :gen, '{}'), 'the step completes');
SELECT ok(NOT cyclone.renew(:step_id, 'w1', :gen), 'renew of a completed step is false');
SELECT is((cyclone_test.step(:'run')).lease_expiry, NULL, 'the completed step has no lease');

SELECT cyclone.submit('one') AS run2 \gset
SELECT ok(NOT cyclone.renew((cyclone_test.step(:'run2')).id, 'w1', 0), 'renew of an available step is false');

SELECT * FROM finish();
ROLLBACK;
