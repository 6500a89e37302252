-- Under SET ROLE cyclone_client: submit, get_run, the views and cyclone_runs /
-- cyclone_steps (SPEC 10) can be read; claim, retry, cyclone_workflows and
-- writes are refused with 42501.
BEGIN;
SELECT plan(11);

SELECT cyclone_test.one_step('one');

SET ROLE cyclone_client;
CREATE TEMP TABLE t AS SELECT cyclone.submit('one', '{"by": "client"}') AS run_id;
SELECT is((SELECT state FROM cyclone.get_run((SELECT run_id FROM t))), 'running', 'the client submitted a run and reads it with get_run');
SELECT is((SELECT input FROM cyclone.cyclone_v_runs WHERE id = (SELECT run_id FROM t)), '{"by": "client"}'::jsonb,
          'the client reads cyclone_v_runs');
SELECT is((SELECT state FROM cyclone.cyclone_v_steps WHERE run_id = (SELECT run_id FROM t)), 'available',
          'the client reads cyclone_v_steps');
SELECT lives_ok($$SELECT count(*) FROM cyclone.cyclone_v_dlq$$, 'the client reads cyclone_v_dlq');
SELECT lives_ok($$SELECT count(*) FROM cyclone.cyclone_v_workflows$$, 'the client reads cyclone_v_workflows');
SELECT throws_ok($$SELECT cyclone.claim('w1')$$, '42501', NULL, 'cyclone.claim: 42501');
SELECT throws_ok(format($$SELECT cyclone.retry(%L, 'work')$$, (SELECT run_id FROM t)), '42501', NULL, 'cyclone.retry: 42501');
SELECT is((SELECT state FROM cyclone.cyclone_runs WHERE id = (SELECT run_id FROM t)), 'running', 'the client reads cyclone_runs');
SELECT is((SELECT node FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM t)), 'work', 'the client reads cyclone_steps');
SELECT throws_ok($$SELECT * FROM cyclone.cyclone_workflows$$, '42501', NULL, 'reading cyclone_workflows directly: 42501');
SELECT throws_ok($$UPDATE cyclone.cyclone_v_runs SET state = 'cancelled'$$, '42501', NULL,
                 'writing through the (auto-updatable) view: 42501');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
