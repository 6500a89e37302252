-- release hands the step's limit slot back with its lease: another step of the bucket can run at once.
BEGIN;
SELECT plan(3);

SELECT cyclone.define_limit('one_at_a_time', 1);
SELECT cyclone_test.limited('lim', '[{"name": "one_at_a_time"}]') AS wf \gset
SELECT cyclone.submit('lim') AS a \gset
SELECT cyclone.submit('lim') AS b \gset
SELECT c.step_id AS s, c.lease_generation AS g FROM cyclone.claim('w1', NULL, 5) c \gset
SELECT is((SELECT count(*)::int FROM cyclone.claim('w2', NULL, 5)), 0, 'the bucket is full');
SELECT is(cyclone.release(:s, 'w1', :g), true, 'released');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w2', NULL, 5)), 1, 'the slot is free again');

SELECT * FROM finish();
ROLLBACK;
