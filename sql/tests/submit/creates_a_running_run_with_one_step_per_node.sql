-- submit creates the run (running) and one step per node, in the caller's
-- transaction, and returns the run id.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('diamond', '[{"name": "a"}, {"name": "b", "deps": ["a"]},
                                        {"name": "c", "deps": ["a"]}, {"name": "d", "deps": ["b", "c"]}]');
SELECT cyclone.advance_time('10 minutes');
CREATE TEMP TABLE t AS SELECT cyclone.submit('diamond', '{"order": 42}') AS run_id;

SELECT isnt((SELECT run_id FROM t), NULL, 'submit returns a run id');
SELECT results_eq(
    $$SELECT workflow, state, input, output, created_at, started_at, finished_at, deadline_at, paused_at,
             parent_run_id, parent_step_id, idempotency_key
        FROM cyclone.cyclone_runs WHERE id = (SELECT run_id FROM t)$$,
    $$VALUES ('diamond'::text, 'running'::text, '{"order": 42}'::jsonb, NULL::jsonb, cyclone.now(), cyclone.now(),
              NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::uuid, NULL::bigint, NULL::text)$$,
    'the run is running, created and started at cyclone.now(), with the input and nothing else');
SELECT bag_eq($$SELECT node FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM t)$$,
              $$VALUES ('a'), ('b'), ('c'), ('d')$$, 'one step per node');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM t)), 4, 'exactly four steps');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 1, 'exactly one run');
SELECT results_eq(
    $$SELECT id, workflow, state, error_kind, error, input, output, created_at, finished_at, deadline_at
        FROM cyclone.get_run((SELECT run_id FROM t))$$,
    $$SELECT run_id, 'diamond'::text, 'running'::text, NULL::text, NULL::text, '{"order": 42}'::jsonb, NULL::jsonb,
             cyclone.now(), NULL::timestamptz, NULL::timestamptz FROM t$$,
    'get_run shows the new run');
SELECT is((SELECT state FROM cyclone.cyclone_v_runs WHERE id = (SELECT run_id FROM t)), 'running', 'cyclone_v_runs shows it');

SELECT * FROM finish();
ROLLBACK;
