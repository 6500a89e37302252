-- SPEC 14: cyclone_dlq_steps {workflow, error_kind} counts every dead letter
-- kept, whatever its run's state: failed runs (read from the index of failed
-- runs), a running and a completed run whose discard cancel_branch contained,
-- a cancelled run (each looked up by id); a retried dead letter leaves it.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.define('fa', '[{"name": "a"}]') \gset
SELECT cyclone_test.define('fb', '[{"name": "a"}, {"name": "b", "deps": ["a"], "on_dep_failure": "cancel_branch"},
                                   {"name": "x"}]') \gset
-- fa: two failed runs (permanent, error), one more failed run later retried.
-- (One run at a time: claim_node claims every claimable step of the node's handler.)
SELECT cyclone.submit('fa') AS fa1 \gset
SELECT cyclone_test.fail_node(:'fa1', 'a', 'permanent');
SELECT cyclone.submit('fa') AS fa2 \gset
SELECT cyclone_test.fail_node(:'fa2', 'a', 'permanent');
SELECT cyclone.submit('fa') AS fa3 \gset
SELECT cyclone_test.fail_node(:'fa3', 'a', 'permanent');
-- fb: a contained discard in a run still running, one in a run that then
-- completed, and one in a run then cancelled.
SELECT cyclone.submit('fb') AS running \gset
SELECT cyclone_test.fail_node(:'running', 'a', 'permanent');
SELECT cyclone.submit('fb') AS completed \gset
SELECT cyclone_test.fail_node(:'completed', 'a', 'permanent');
SELECT cyclone_test.run_node(:'completed', 'x');
SELECT cyclone.submit('fb') AS cancelled \gset
SELECT cyclone_test.fail_node(:'cancelled', 'a', 'permanent');
SELECT cyclone.cancel(:'cancelled');

SELECT results_eq(format('SELECT cyclone_test.run_state(r) FROM unnest(ARRAY[%L, %L, %L, %L]::uuid[]) r',
                         :'fa1', :'running', :'completed', :'cancelled'),
                  $$VALUES ('failed'::text), ('running'), ('completed'), ('cancelled')$$,
                  'the dead letters'' runs are failed, running, completed and cancelled');
SELECT results_eq($$SELECT labels ->> 'workflow', labels ->> 'error_kind', value FROM cyclone.metrics()
                     WHERE name = 'cyclone_dlq_steps' ORDER BY 1, 2$$,
                  $$VALUES ('fa'::text, 'permanent'::text, 3::float8), ('fb', 'permanent', 3)$$,
                  'each dead letter counted under its run''s workflow, whatever the run''s state');

SELECT cyclone.retry(:'fa3', 'a');
SELECT results_eq($$SELECT labels ->> 'workflow', value FROM cyclone.metrics()
                     WHERE name = 'cyclone_dlq_steps' ORDER BY 1$$,
                  $$VALUES ('fa'::text, 2::float8), ('fb', 3)$$,
                  'a retried dead letter is no longer counted (its run is running again)');

SELECT * FROM finish();
ROLLBACK;
