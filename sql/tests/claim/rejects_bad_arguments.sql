BEGIN;
SELECT plan(10);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset

SELECT throws_ok($$SELECT * FROM cyclone.claim('w1', NULL, 0)$$, '22023', NULL, 'p_limit 0 raises 22023');
SELECT throws_ok($$SELECT * FROM cyclone.claim('w1', NULL, -1)$$, '22023', NULL, 'a negative p_limit raises 22023');
SELECT throws_ok($$SELECT * FROM cyclone.claim('w1', NULL, 1, '0 seconds')$$, '22023', NULL, 'a zero lease ttl raises 22023');
SELECT throws_ok($$SELECT * FROM cyclone.claim('w1', NULL, 1, '-5 seconds')$$, '22023', NULL, 'a negative lease ttl raises 22023');
SELECT throws_ok($$SELECT * FROM cyclone.claim('')$$, '22023', NULL, 'an empty worker name raises 22023');
SELECT throws_ok($$SELECT * FROM cyclone.claim(NULL)$$, '22004', NULL, 'a NULL worker raises 22004');
SELECT throws_ok($$SELECT * FROM cyclone.claim('w1', NULL, NULL)$$, '22004', NULL, 'a NULL p_limit raises 22004');
SELECT throws_ok($$SELECT * FROM cyclone.claim('w1', NULL, 1, NULL)$$, '22004', NULL, 'a NULL lease ttl raises 22004');
SELECT is(cyclone_test.state(:'run'), 'available', 'no bad call claimed anything');
SELECT is((cyclone_test.step(:'run')).lease_generation, 0::bigint, 'no bad call bumped the generation');

SELECT * FROM finish();
ROLLBACK;
