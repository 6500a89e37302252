-- cyclone_v_steps.completed_at is the terminal timestamp of completed,
-- discarded and cancelled steps alike; cyclone_v_dlq lists exactly the
-- discarded steps with their run's workflow.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.define('chain', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]');
SELECT cyclone_test.one_step('single');
CREATE TEMP TABLE t AS
SELECT cyclone.submit('chain', '{"n": 1}') AS failed_run, cyclone.submit('single', '{}') AS ok_run;

SELECT cyclone.advance_time('5 minutes');
CREATE TEMP TABLE t_now AS SELECT cyclone.now() AS at;

SELECT is(cyclone_test.run_node((SELECT ok_run FROM t), 'work', '{"ok": true}'), true, 'single: work completed');
SELECT is(cyclone_test.fail_node((SELECT failed_run FROM t), 'a', 'permanent'), 'discarded', 'chain: a discarded');

SELECT is((SELECT completed_at FROM cyclone.cyclone_v_steps WHERE run_id = (SELECT ok_run FROM t) AND node = 'work'),
          (SELECT at FROM t_now), 'a completed step has completed_at = cyclone.now() of its completion');
SELECT is((SELECT completed_at FROM cyclone.cyclone_v_steps WHERE run_id = (SELECT failed_run FROM t) AND node = 'a'),
          (SELECT at FROM t_now), 'a discarded step has completed_at');
SELECT results_eq(
    $$SELECT state, error_kind, completed_at FROM cyclone.cyclone_v_steps
       WHERE run_id = (SELECT failed_run FROM t) AND node = 'b'$$,
    $$VALUES ('cancelled'::text, 'cancelled'::text, (SELECT at FROM t_now))$$,
    'a cancelled step has completed_at too');
SELECT is((SELECT completed_at FROM cyclone.cyclone_v_steps WHERE run_id = (SELECT ok_run FROM t) AND node = 'work')
          IS DISTINCT FROM pg_catalog.now(), true, 'completed_at follows the engine clock, not now()');

SELECT is(cyclone_test.run_state((SELECT failed_run FROM t)), 'failed', 'chain run failed');
SELECT results_eq(
    $$SELECT workflow, run_id, node, state, error_kind, error, completed_at FROM cyclone.cyclone_v_dlq
       WHERE run_id IN (SELECT failed_run FROM t UNION ALL SELECT ok_run FROM t)$$,
    $$SELECT 'chain'::text, failed_run, 'a'::text, 'discarded'::text, 'permanent'::text, 'boom'::text,
             (SELECT at FROM t_now) FROM t$$,
    'the DLQ holds only the discarded step, with its workflow');
SELECT is((SELECT completed_at FROM cyclone.cyclone_v_steps WHERE run_id = (SELECT failed_run FROM t) AND node = 'a'),
          (SELECT finished_at FROM cyclone.cyclone_steps WHERE run_id = (SELECT failed_run FROM t) AND node = 'a'),
          'completed_at is the step''s finished_at');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_steps
            WHERE run_id IN (SELECT failed_run FROM t UNION ALL SELECT ok_run FROM t) AND completed_at IS NULL),
          0, 'no terminal step lacks completed_at');

SELECT * FROM finish();
ROLLBACK;
