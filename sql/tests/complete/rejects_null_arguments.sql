BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset

SELECT throws_ok(format('SELECT cyclone.complete(NULL, %L, %s)', 'w1', :gen), '22004', NULL, 'a NULL step id raises 22004');
SELECT throws_ok(format('SELECT cyclone.complete(%s, NULL, %s)', :step_id, :gen), '22004', NULL, 'a NULL worker raises 22004');
SELECT throws_ok(format('SELECT cyclone.complete(%s, %L, NULL)', :step_id, 'w1'), '22004', NULL, 'a NULL generation raises 22004');
SELECT is(cyclone_test.state(:'run'), 'running', 'the step is still running');

SELECT * FROM finish();
ROLLBACK;
