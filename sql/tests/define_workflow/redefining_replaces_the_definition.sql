-- define_workflow is insert-or-replace: a second call with the same name
-- replaces the definition (one row, updated_at moves), and runs submitted
-- under the old definition keep their steps.
BEGIN;
SELECT plan(7);

SELECT cyclone.define_workflow('wf', '{"nodes": [{"name": "a"}]}');
CREATE TEMP TABLE t AS SELECT cyclone.submit('wf') AS old_run, cyclone.now() AS defined_at;
SELECT is((SELECT updated_at FROM cyclone.cyclone_workflows WHERE name = 'wf'), (SELECT defined_at FROM t),
          'updated_at is the engine time of the definition');

SELECT cyclone.advance_time('1 hour');
SELECT lives_ok($$SELECT cyclone.define_workflow('wf', '{"max_attempts": 4, "nodes": [{"name": "x"}, {"name": "y", "deps": ["x"]}]}')$$,
                'redefining an existing workflow works');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'wf'), 1, 'still one row');
SELECT is((SELECT updated_at FROM cyclone.cyclone_workflows WHERE name = 'wf'), cyclone.now(), 'updated_at moved to the redefinition');

CREATE TEMP TABLE t2 AS SELECT cyclone.submit('wf') AS new_run;
SELECT results_eq($$SELECT node, max_attempts FROM cyclone.cyclone_steps WHERE run_id = (SELECT new_run FROM t2) ORDER BY node$$,
                  $$VALUES ('x'::text, 4), ('y'::text, 4)$$, 'a new run follows the new definition');
SELECT results_eq($$SELECT node, max_attempts FROM cyclone.cyclone_steps WHERE run_id = (SELECT old_run FROM t) ORDER BY node$$,
                  $$VALUES ('a'::text, 25)$$, 'the run submitted before keeps its steps');
SELECT is(cyclone_test.state((SELECT old_run FROM t), 'a'), 'available', 'and can still be worked');

SELECT * FROM finish();
ROLLBACK;
