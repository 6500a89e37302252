-- claim sets state running, lease_owner, lease_expiry = now + ttl, heartbeat_at
-- and started_at = now, and increments lease_generation at every claim.
BEGIN;
SELECT plan(13);

SELECT cyclone_test.one_step('one', 3) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT (cyclone_test.step(:'run')).lease_generation AS gen0 \gset

SELECT cyclone.advance_time('5 seconds') AS t1 \gset
SELECT step_id, lease_generation AS gen1 FROM cyclone.claim('worker-a', NULL, 1, '45 seconds') \gset

SELECT is(:gen0::bigint, 0::bigint, 'a new step has lease_generation 0');
SELECT is(:gen1::bigint, 1::bigint, 'the first claim returns generation 1');
SELECT is((cyclone_test.step(:'run')).state, 'running', 'state running');
SELECT is((cyclone_test.step(:'run')).lease_owner, 'worker-a', 'lease_owner is the worker');
SELECT is((cyclone_test.step(:'run')).lease_expiry, :'t1'::timestamptz + interval '45 seconds', 'lease_expiry = now + p_lease_ttl');
SELECT is((cyclone_test.step(:'run')).heartbeat_at, :'t1'::timestamptz, 'heartbeat_at = now');
SELECT is((cyclone_test.step(:'run')).started_at, :'t1'::timestamptz, 'started_at = now');
SELECT is((cyclone_test.step(:'run')).lease_generation, 1::bigint, 'the row holds generation 1');

-- A second execution: fail with no delay, claim again later with the default ttl.
SELECT is(cyclone.fail(:step_id, 'worker-a', :gen1, 'boom', 'error', '0 seconds'), 'available', 'the first execution fails');
SELECT cyclone.advance_time('7 seconds') AS t2 \gset
SELECT lease_generation AS gen2 FROM cyclone.claim('worker-b') \gset
SELECT is(:gen2::bigint, 2::bigint, 'the next claim returns generation 2');
SELECT is((cyclone_test.step(:'run')).lease_expiry, :'t2'::timestamptz + interval '30 seconds', 'the default lease ttl is 30 seconds');
SELECT is((cyclone_test.step(:'run')).started_at, :'t2'::timestamptz, 'started_at moves to the new claim');
SELECT is((cyclone_test.step(:'run')).lease_owner, 'worker-b', 'lease_owner is the new worker');

SELECT * FROM finish();
ROLLBACK;
