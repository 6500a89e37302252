-- Submitting a workflow that was never defined raises P0002 and writes nothing.
BEGIN;
SELECT plan(4);

SELECT throws_ok($$SELECT cyclone.submit('nope')$$, 'P0002', NULL, 'unknown workflow: P0002');
SELECT throws_ok($$SELECT cyclone.submit('nope', '{}', NULL, 'key-1')$$, 'P0002', NULL, 'with an idempotency key too');
SELECT cyclone_test.one_step('Nope');
SELECT throws_ok($$SELECT cyclone.submit('nope')$$, 'P0002', NULL, 'workflow names are case-sensitive');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');

SELECT * FROM finish();
ROLLBACK;
