-- renew takes claim's bound: p_lease_ttl is at most 1 day; a longer one raises 22023 naming it and leaves
-- the lease as it was.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT (cyclone_test.step(:'run')).lease_expiry AS expiry \gset

SELECT throws_ok(format('SELECT cyclone.renew(%s, %L, %s, %L)', :step_id, 'w1', :gen, '1000 years'),
                 '22023', 'renew: p_lease_ttl must be at most 1 day (got 1000 years)', '1,000 years raises 22023');
SELECT throws_ok(format('SELECT cyclone.renew(%s, %L, %s, %L)', :step_id, 'w1', :gen, '25 hours'),
                 '22023', NULL, '25 hours raises 22023');
SELECT is((cyclone_test.step(:'run')).lease_expiry, :'expiry'::timestamptz, 'the lease is unchanged');
SELECT is(cyclone.renew(:step_id, 'w1', :gen, '1 day'), true, 'exactly 1 day is accepted');

SELECT * FROM finish();
ROLLBACK;
