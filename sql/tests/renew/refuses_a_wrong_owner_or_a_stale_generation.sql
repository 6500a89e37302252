BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT (cyclone_test.step(:'run')).lease_expiry AS expiry0 \gset
SELECT cyclone.advance_time('10 seconds') AS t1 \gset

SELECT ok(NOT cyclone.renew(:step_id, 'w2', :gen), 'another worker cannot renew');
SELECT ok(NOT cyclone.renew(:step_id, 'w1', :gen + 1), 'a future generation does not match');
SELECT ok(NOT cyclone.renew(:step_id, 'w1', :gen - 1), 'an older generation does not match');
SELECT ok(NOT cyclone.renew(-1, 'w1', :gen), 'an unknown step id returns false');
SELECT is((cyclone_test.step(:'run')).lease_expiry, :'expiry0'::timestamptz, 'lease_expiry is unchanged');
SELECT is((cyclone_test.step(:'run')).heartbeat_at, (cyclone_test.step(:'run')).started_at, 'heartbeat_at is unchanged');

SELECT * FROM finish();
ROLLBACK;
