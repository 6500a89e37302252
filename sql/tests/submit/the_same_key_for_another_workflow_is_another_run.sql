-- Idempotency keys are scoped to a workflow: the same key for another workflow
-- creates a separate run.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('a');
SELECT cyclone_test.one_step('b');
CREATE TEMP TABLE t AS SELECT cyclone.submit('a', '{}', NULL, 'k1') AS run_a;
CREATE TEMP TABLE t2 AS SELECT cyclone.submit('b', '{}', NULL, 'k1') AS run_b;

SELECT isnt((SELECT run_b FROM t2), (SELECT run_a FROM t), 'a different run id');
SELECT results_eq($$SELECT workflow, idempotency_key FROM cyclone.cyclone_runs ORDER BY workflow$$,
                  $$VALUES ('a'::text, 'k1'::text), ('b', 'k1')$$, 'two runs, one per workflow, same key');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps), 2, 'each run has its step');
SELECT is(cyclone.submit('b', '{}', NULL, 'k1'), (SELECT run_b FROM t2), 'and the key is idempotent within workflow b');

SELECT * FROM finish();
ROLLBACK;
