-- SPEC 18: release(p_step_id, p_worker, p_lease_generation) hands a lease back: the step is available again
-- at once with scheduled_at unchanged, no attempt charged, reclaims unchanged; false when the lease is no
-- longer the caller's; the released execution's late report is refused.
BEGIN;
SELECT plan(13);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT (cyclone_test.step(:'run')).scheduled_at AS due \gset
SELECT cyclone.advance_time('3 seconds');
SELECT step_id AS s, lease_generation AS g FROM cyclone_test.claim_node(:'run', 'work', 'w1') \gset

SELECT is(cyclone.release(:s, 'w2', :g), false, 'another worker cannot release it');
SELECT is(cyclone.release(:s, 'w1', :g + 1), false, 'nor a stale generation');
SELECT is(cyclone.release(-1, 'w1', :g), false, 'an unknown step: false');
SELECT is(cyclone_test.state(:'run'), 'running', 'those changed nothing');

SELECT is(cyclone.release(:s, 'w1', :g), true, 'the owner releases it');
SELECT is(cyclone_test.state(:'run'), 'available', 'available again at once');
SELECT is((cyclone_test.step(:'run')).scheduled_at, :'due'::timestamptz, 'scheduled_at unchanged');
SELECT is((cyclone_test.step(:'run')).lease_owner, NULL, 'no lease');
SELECT is((cyclone_test.step(:'run')).reclaims, 0, 'reclaims unchanged');
SELECT is(cyclone.release(:s, 'w1', :g), false, 'a second release: false');

SELECT is(c.attempt, 1, 'the next claim runs the same attempt') FROM cyclone.claim('w2') c;
SELECT is(cyclone.complete(:s, 'w1', :g, '{}'), false, 'the released execution''s late result is refused');
SELECT throws_ok($$SELECT cyclone.release(NULL, 'w1', 1)$$, '22004', NULL, 'a missing argument: 22004');

SELECT * FROM finish();
ROLLBACK;
