-- step_lease_iff_running: a running step without a lease (or a lease on a step
-- that is not running) cannot be stored.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one');
CREATE TEMP TABLE t AS SELECT cyclone.submit('one') AS run_id;
CREATE TEMP TABLE s AS SELECT id FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM t);

SELECT throws_ok(
    format($$UPDATE cyclone.cyclone_steps SET state = 'running' WHERE id = %s$$, (SELECT id FROM s)),
    '23514', NULL, 'running without lease_owner and lease_expiry is rejected');
SELECT throws_ok(
    format($$UPDATE cyclone.cyclone_steps SET state = 'running', lease_owner = 'w1' WHERE id = %s$$, (SELECT id FROM s)),
    '23514', NULL, 'running without lease_expiry is rejected');
SELECT throws_ok(
    format($$UPDATE cyclone.cyclone_steps SET lease_owner = 'w1', lease_expiry = cyclone.now() WHERE id = %s$$,
           (SELECT id FROM s)),
    '23514', NULL, 'an available step cannot hold a lease');
SELECT lives_ok(
    format($$UPDATE cyclone.cyclone_steps SET state = 'running', lease_owner = 'w1',
             lease_expiry = cyclone.now() + interval '30 seconds' WHERE id = %s$$, (SELECT id FROM s)),
    'running with a lease is accepted');

SELECT * FROM finish();
ROLLBACK;
