BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('known', 1) AS wf \gset
SELECT cyclone.submit('known') AS run \gset
SELECT is(cyclone_test.fail_node(:'run', 'work'), 'discarded', 'work is discarded');

SELECT throws_ok($$SELECT cyclone.retry(gen_random_uuid(), 'work')$$, 'P0002', NULL, 'unknown run: P0002');
SELECT throws_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'nope'), 'P0002', NULL, 'unknown node of a known run: P0002');

SELECT * FROM finish();
ROLLBACK;
