-- Only a discarded step can be retried: pending, available, running,
-- completed and cancelled steps raise 55000 and change nothing.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.define('nd', '[{"name":"a"},{"name":"b"},{"name":"c","deps":["a"]},{"name":"done"}]') AS wf \gset
SELECT cyclone.submit('nd') AS run \gset
SELECT ok(cyclone_test.run_node(:'run', 'done', '1'), 'done completes');
SELECT * FROM cyclone_test.claim_node(:'run', 'a') \gset a_

SELECT throws_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'b'), '55000', NULL, 'available step: 55000');
SELECT throws_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'a'), '55000', NULL, 'running step: 55000');
SELECT throws_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'c'), '55000', NULL, 'pending step: 55000');
SELECT throws_ok(format('SELECT cyclone.retry(%L, %L, 3)', :'run', 'done'), '55000', NULL, 'completed step: 55000');
SELECT results_eq(format('SELECT node, state, max_attempts FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node', :'run'),
                  $$VALUES ('a'::text, 'running'::text, 3), ('b', 'available', 3), ('c', 'pending', 3), ('done', 'completed', 3)$$,
                  'the refused retries changed nothing');
SELECT ok(cyclone.complete(:a_step_id, 'w1', :a_lease_generation, '1'), 'the running step keeps its lease');

-- A step cancelled by a failure is not a dead letter either.
SELECT is(cyclone_test.fail_node(:'run', 'c', 'permanent'), 'discarded', 'c is discarded, the run fails');
SELECT throws_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'b'), '55000', NULL, 'cancelled step: 55000');

SELECT * FROM finish();
ROLLBACK;
