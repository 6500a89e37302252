-- renew: true, lease_expiry = now + ttl, heartbeat_at = now; started_at and the
-- generation do not move, and the renewed lease really protects the step.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT cyclone.advance_time('1 second') AS t0 \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1', '30 seconds') \gset

SELECT cyclone.advance_time('20 seconds') AS t1 \gset
SELECT ok(cyclone.renew(:step_id, 'w1', :gen, '60 seconds'), 'renew by the owner at the current generation is true');
SELECT is((cyclone_test.step(:'run')).lease_expiry, :'t1'::timestamptz + interval '60 seconds', 'lease_expiry = now + p_lease_ttl');
SELECT is((cyclone_test.step(:'run')).heartbeat_at, :'t1'::timestamptz, 'heartbeat_at = now');
SELECT is((cyclone_test.step(:'run')).started_at, :'t0'::timestamptz, 'started_at is unchanged');
SELECT is((cyclone_test.step(:'run')).lease_generation, :gen::bigint, 'lease_generation is unchanged');

-- Past the original expiry (t0 + 30 s) but inside the renewed one.
SELECT cyclone.advance_time('50 seconds') AS t2 \gset
SELECT is_empty($$SELECT * FROM cyclone.sweep()$$, 'the sweep leaves a renewed lease alone');
SELECT is(cyclone_test.state(:'run'), 'running', 'the step is still running');

SELECT ok(cyclone.renew(:step_id, 'w1', :gen), 'renew again with the default ttl');
SELECT is((cyclone_test.step(:'run')).lease_expiry, :'t2'::timestamptz + interval '30 seconds', 'the default ttl is 30 seconds');

SELECT * FROM finish();
ROLLBACK;
