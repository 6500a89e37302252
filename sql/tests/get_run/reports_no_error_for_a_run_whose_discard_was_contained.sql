-- A contained discard (cancel_branch) is not the run's error: when it is the
-- last thing to happen, the run completes in the discard's transaction.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('contained', '[{"name":"x"},{"name":"a"},
                                          {"name":"b","deps":["a"],"on_dep_failure":"cancel_branch"}]') AS wf \gset
SELECT cyclone.submit('contained') AS run \gset

SELECT ok(cyclone_test.run_node(:'run', 'x', '"x"'), 'x completes');
SELECT cyclone.advance_time('1 minute') AS t1 \gset
SELECT is(cyclone_test.fail_node(:'run', 'a', 'permanent'), 'discarded', 'a is discarded, the last live step but b');
SELECT results_eq(format('SELECT state, error_kind, error, output, finished_at FROM cyclone.get_run(%L)', :'run'),
                  format($$VALUES ('completed'::text, NULL::text, NULL::text, '{"x": "x"}'::jsonb, %L::timestamptz)$$, :'t1'),
                  'the run completes at the discard, with no error_kind or error');
SELECT results_eq(format($$SELECT state, error FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'b'$$, :'run'),
                  $$VALUES ('cancelled'::text, 'dependency discarded'::text)$$, 'b was cancelled');

SELECT * FROM finish();
ROLLBACK;
