-- Retrying a discard that cancel_branch contained brings its cancelled branch
-- back (pending), even after the run completed without it; the run returns to
-- running and completes again with the branch's leaf in its output.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.define('branch', '[{"name":"a"},{"name":"b","deps":["a"],"on_dep_failure":"cancel_branch"},
                                       {"name":"c","deps":["b"]},{"name":"x"}]') AS wf \gset
SELECT cyclone.submit('branch') AS run \gset

SELECT is(cyclone_test.fail_node(:'run', 'a', 'permanent'), 'discarded', 'a is discarded');
SELECT ok(cyclone_test.run_node(:'run', 'x', '"x"'), 'x completes');
SELECT results_eq(format('SELECT state, output FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('completed'::text, '{"x": "x"}'::jsonb)$$, 'the run completed without the branch');

SELECT cyclone.advance_time('1 hour') AS t1 \gset
SELECT lives_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'a'), 'retry the contained discard');
SELECT results_eq(format('SELECT state, finished_at, output FROM cyclone.cyclone_runs WHERE id = %L', :'run'),
                  $$VALUES ('running'::text, NULL::timestamptz, NULL::jsonb)$$, 'the completed run is running again');
SELECT results_eq(format($$SELECT node, state, error FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node$$, :'run'),
                  $$VALUES ('a'::text, 'available'::text, NULL::text), ('b', 'pending', NULL), ('c', 'pending', NULL),
                           ('x', 'completed', NULL)$$,
                  'a is available and its cancelled branch is pending again');

SELECT ok(cyclone_test.run_node(:'run', 'a', '"a"'), 'a completes');
SELECT ok(cyclone_test.run_node(:'run', 'b', '"b"'), 'b completes');
SELECT ok(cyclone_test.run_node(:'run', 'c', '"c"'), 'c completes');
SELECT results_eq(format('SELECT state, error_kind, output, finished_at FROM cyclone.get_run(%L)', :'run'),
                  format($$VALUES ('completed'::text, NULL::text, '{"c": "c", "x": "x"}'::jsonb, %L::timestamptz)$$, :'t1'),
                  'the run completes again, its output now with both leaves');

SELECT * FROM finish();
ROLLBACK;
