-- Once the sweep reclaimed the step, the old lease is dead: renew is false
-- while the step is available, and stays false after another worker claimed it.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1', '30 seconds') \gset
SELECT cyclone.advance_time('31 seconds') AS t1 \gset
SELECT is((SELECT action FROM cyclone.sweep()), 'reclaimed', 'the expired lease is reclaimed');

SELECT ok(NOT cyclone.renew(:step_id, 'w1', :gen), 'renew of the reclaimed lease is false');
SELECT step_id AS step2, lease_generation AS gen2 FROM cyclone_test.claim_node(:'run', 'work', 'w2') \gset
SELECT ok(NOT cyclone.renew(:step_id, 'w1', :gen), 'the old lease stays dead after the re-claim');
SELECT ok(NOT cyclone.renew(:step_id, 'w1', :gen2), 'the old owner cannot renew with the new generation');
SELECT ok(cyclone.renew(:step_id, 'w2', :gen2), 'the new owner renews');
SELECT is((cyclone_test.step(:'run')).lease_owner, 'w2', 'the lease is w2''s');

SELECT * FROM finish();
ROLLBACK;
