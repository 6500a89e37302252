-- After a fail_run failure (one dead letter, the rest cancelled), retry_all
-- returns 1 and the run can finish with every step completed.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('ff', '[{"name":"b"},{"name":"c"},{"name":"d","deps":["b","c"]}]') AS wf \gset
SELECT cyclone.submit('ff') AS run \gset

SELECT is(cyclone_test.fail_node(:'run', 'b', 'permanent'), 'discarded', 'b fails permanently, the run fails');
SELECT is(cyclone.retry_all(:'run'), 1, 'one step reopened');
SELECT is(cyclone.retry_all(:'run'), 0, 'a second retry_all finds nothing discarded');
SELECT ok(cyclone_test.run_node(:'run', 'b', '1') AND cyclone_test.run_node(:'run', 'c', '2')
          AND cyclone_test.run_node(:'run', 'd', '3'), 'b, c and d complete');
SELECT results_eq(format($$SELECT r.state, (SELECT array_agg(DISTINCT s.state) FROM cyclone.cyclone_steps s WHERE s.run_id = r.id)
                             FROM cyclone.cyclone_runs r WHERE r.id = %L$$, :'run'),
                  $$VALUES ('completed'::text, ARRAY['completed'])$$, 'the run and every step are completed');

SELECT * FROM finish();
ROLLBACK;
