-- A snoozed step gives its limit slot back with its lease: another step of the bucket can run meanwhile.
BEGIN;
SELECT plan(2);

SELECT cyclone.define_limit('one_at_a_time', 1);
SELECT cyclone_test.limited('lim', '[{"name": "one_at_a_time"}]') AS wf \gset
SELECT cyclone.submit('lim') AS a \gset
SELECT cyclone.submit('lim') AS b \gset
SELECT c.step_id AS s, c.lease_generation AS g FROM cyclone.claim('w1', NULL, 5) c \gset
SELECT is(cyclone.snooze(:s, 'w1', :g, '1 hour'), true, 'snoozed');
SELECT is((SELECT run_id FROM cyclone.claim('w2', NULL, 5)), :'b'::uuid, 'the other step takes the slot');

SELECT * FROM finish();
ROLLBACK;
