BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset

SELECT throws_ok(format('SELECT cyclone.renew(%s, %L, %s, %L)', :step_id, 'w1', :gen, '0 seconds'),
                 '22023', NULL, 'a zero ttl raises 22023');
SELECT throws_ok(format('SELECT cyclone.renew(%s, %L, %s, %L)', :step_id, 'w1', :gen, '-1 second'),
                 '22023', NULL, 'a negative ttl raises 22023');
SELECT throws_ok(format('SELECT cyclone.renew(%s, %L, %s, NULL)', :step_id, 'w1', :gen),
                 '22004', NULL, 'a NULL ttl raises 22004');
SELECT throws_ok(format('SELECT cyclone.renew(%s, NULL, %s)', :step_id, :gen),
                 '22004', NULL, 'a NULL worker raises 22004');
SELECT throws_ok(format('SELECT cyclone.renew(%s, %L, NULL)', :step_id, 'w1'),
                 '22004', NULL, 'a NULL generation raises 22004');

SELECT * FROM finish();
ROLLBACK;
