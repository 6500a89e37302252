BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('args', 1) AS wf \gset
SELECT cyclone.submit('args') AS run \gset
SELECT is(cyclone_test.fail_node(:'run', 'work'), 'discarded', 'work is discarded');

SELECT throws_ok(format('SELECT cyclone.retry(%L, %L, -1)', :'run', 'work'), '22023', NULL, 'negative additional attempts: 22023');
SELECT throws_ok(format('SELECT cyclone.retry(%L, NULL)', :'run'), '22004', NULL, 'NULL node: 22004');
SELECT is(cyclone_test.state(:'run', 'work'), 'discarded', 'the refused retries changed nothing');

SELECT * FROM finish();
ROLLBACK;
