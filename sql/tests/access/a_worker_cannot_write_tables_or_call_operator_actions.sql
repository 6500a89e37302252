-- Under SET ROLE cyclone_worker: the worker protocol works, but a direct write to
-- the tables and an operator action are refused with 42501 (insufficient_privilege).
BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('one', 1);
CREATE TEMP TABLE t AS SELECT cyclone.submit('one') AS run_id;
SELECT cyclone_test.fail_node((SELECT run_id FROM t), 'work', 'permanent');
GRANT SELECT ON t TO cyclone_worker;

SET ROLE cyclone_worker;
SELECT throws_ok(
    format($$INSERT INTO cyclone.cyclone_runs (workflow) VALUES (%L)$$, 'one'),
    '42501', NULL, 'INSERT INTO cyclone.cyclone_runs: 42501');
SELECT throws_ok(
    $$UPDATE cyclone.cyclone_steps SET state = 'completed'$$, '42501', NULL, 'UPDATE cyclone.cyclone_steps: 42501');
SELECT throws_ok(
    format($$SELECT cyclone.retry(%L, 'work')$$, (SELECT run_id FROM t)),
    '42501', NULL, 'cyclone.retry: 42501');
SELECT throws_ok(
    format($$SELECT cyclone.cancel(%L)$$, (SELECT run_id FROM t)), '42501', NULL, 'cyclone.cancel: 42501');
SELECT throws_ok($$SELECT cyclone.submit('one')$$, '42501', NULL, 'cyclone.submit: 42501');
SELECT throws_ok($$SELECT cyclone.advance_time('1 hour')$$, '42501', NULL, 'cyclone.advance_time: 42501');
SELECT lives_ok($$SELECT cyclone.define_workflow('by_worker', '{"nodes": [{"name": "a"}]}')$$,
                'but the worker can register a workflow');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1')), 0, 'and claim (nothing is available)');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
