-- Under SET ROLE cyclone_admin: operator actions and the clock work; direct
-- writes are still refused (42501).
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one');
CREATE TEMP TABLE t AS SELECT cyclone.submit('one') AS run_id, pg_catalog.now() AS tx_now;
SELECT cyclone.reset_time();
GRANT SELECT ON t TO cyclone_admin;

SET ROLE cyclone_admin;
SELECT is(cyclone.advance_time('1 hour'), (SELECT tx_now FROM t) + interval '1 hour', 'the admin moves the clock');
SELECT lives_ok('SELECT cyclone.reset_time()', 'and resets it');
SELECT is(cyclone.pause((SELECT run_id FROM t)), true, 'the admin pauses a run');
SELECT throws_ok($$UPDATE cyclone.clock SET time_offset = interval '-1 day'$$, '42501', NULL,
                 'writing the clock table directly: 42501');
SELECT throws_ok($$DELETE FROM cyclone.cyclone_runs$$, '42501', NULL, 'DELETE FROM cyclone.cyclone_runs: 42501');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
