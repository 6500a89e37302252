-- A cancelled run is over for good: even its discarded steps cannot be retried
-- (55000), by retry or retry_all, and nothing changes.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('gone', '[{"name":"a"},{"name":"b","deps":["a"],"on_dep_failure":"cancel_branch"},{"name":"x"}]') AS wf \gset
SELECT cyclone.submit('gone') AS run \gset

SELECT is(cyclone_test.fail_node(:'run', 'a', 'permanent'), 'discarded', 'a is discarded (contained)');
SELECT ok(cyclone.cancel(:'run', 'not needed'), 'the run is cancelled');
SELECT throws_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'a'), '55000', NULL, 'retry of a discarded step of a cancelled run: 55000');
SELECT throws_ok(format('SELECT cyclone.retry_all(%L)', :'run'), '55000', NULL, 'retry_all of a cancelled run: 55000');
SELECT results_eq(format('SELECT node, state FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node', :'run'),
                  $$VALUES ('a'::text, 'discarded'::text), ('b', 'cancelled'), ('x', 'cancelled')$$, 'the steps are unchanged');
SELECT is(cyclone_test.run_state(:'run'), 'cancelled', 'the run stays cancelled');

SELECT * FROM finish();
ROLLBACK;
