-- SPEC 16: snooze(p_step_id, p_worker, p_lease_generation, p_delay), the compare-and-set of complete: on a
-- match the step is available again at now + p_delay with its lease cleared, the attempt not charged,
-- reclaims unchanged and snoozes + 1; false otherwise, and the snoozed execution's late report is refused.
BEGIN;
SELECT plan(15);

SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('one') AS run \gset
SELECT step_id AS s, lease_generation AS g FROM cyclone_test.claim_node(:'run', 'work', 'w1') \gset

SELECT is(cyclone.snooze(:s, 'w2', :g, '1 minute'), false, 'another worker cannot snooze it');
SELECT is(cyclone.snooze(:s, 'w1', :g + 1, '1 minute'), false, 'nor a stale generation');
SELECT is(cyclone.snooze(-1, 'w1', :g, '1 minute'), false, 'an unknown step: false');
SELECT is(cyclone_test.state(:'run'), 'running', 'those changed nothing');

SELECT is(cyclone.snooze(:s, 'w1', :g, '1 minute'), true, 'the owner snoozes it');
SELECT is(cyclone_test.state(:'run'), 'available', 'available again');
SELECT is((cyclone_test.step(:'run')).scheduled_at, cyclone.now() + interval '1 minute', 'due after the delay');
SELECT is((cyclone_test.step(:'run')).lease_owner, NULL, 'the lease is cleared');
SELECT is((cyclone_test.step(:'run')).snoozes, 1, 'snoozes grows by one');
SELECT is((SELECT snoozes FROM cyclone.cyclone_v_steps WHERE id = :s), 1, 'cyclone_v_steps shows it');
SELECT is((cyclone_test.step(:'run')).reclaims, 0, 'reclaims unchanged');
SELECT is(cyclone.complete(:s, 'w1', :g, '{}'), false, 'the snoozed execution''s late result is refused');

SELECT is((SELECT count(*)::int FROM cyclone.claim('w2')), 0, 'not claimable before the delay');
SELECT cyclone.advance_time('1 minute');
SELECT is(c.attempt, 1, 'the next claim runs the same attempt') FROM cyclone.claim('w2') c;
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_step_errors), 0, 'a snooze is not an error');

SELECT * FROM finish();
ROLLBACK;
