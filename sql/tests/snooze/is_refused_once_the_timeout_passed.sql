-- SPEC 18: a snooze or a progress report that arrives after the step's timeout passed is refused (false), as
-- complete, fail and renew refuse theirs.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('slow', 3, '10 seconds');
SELECT cyclone.submit('slow') AS run \gset
SELECT step_id AS s, lease_generation AS g FROM cyclone_test.claim_node(:'run', 'work', 'w1', '1 minute') \gset
SELECT cyclone.advance_time('10 seconds');

SELECT is(cyclone.snooze(:s, 'w1', :g, '1 minute'), false, 'snooze after the timeout: false');
SELECT is(cyclone.progress(:s, 'w1', :g, '0.5'), false, 'progress after the timeout: false');
SELECT is(cyclone_test.state(:'run'), 'running', 'the step is left to the sweep');
SELECT is((cyclone_test.step(:'run')).progress, NULL, 'no progress kept');

SELECT * FROM finish();
ROLLBACK;
