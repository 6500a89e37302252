-- SPEC 16: p_delay below zero or above 365 days is 22023 (nothing changes); a missing argument 22004; a zero
-- delay makes the step due at once.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('one') AS run \gset
SELECT step_id AS s, lease_generation AS g FROM cyclone_test.claim_node(:'run', 'work', 'w1') \gset

SELECT throws_ok(format($$SELECT cyclone.snooze(%s, 'w1', %s, '-1 second')$$, :s, :g), '22023',
                 'snooze: p_delay must be between 0 and 365 days (got -00:00:01)', 'a negative delay: 22023');
SELECT throws_ok(format($$SELECT cyclone.snooze(%s, 'w1', %s, '366 days')$$, :s, :g), '22023', NULL,
                 'over 365 days: 22023');
SELECT throws_ok(format($$SELECT cyclone.snooze(%s, 'w1', %s, NULL)$$, :s, :g), '22004', NULL,
                 'a missing delay: 22004');
SELECT is(cyclone_test.state(:'run'), 'running', 'nothing changed');
SELECT is(cyclone.snooze(:s, 'w1', :g, '0'), true, 'a zero delay');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w2')), 1, 'is due at once');

SELECT * FROM finish();
ROLLBACK;
