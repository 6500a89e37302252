-- A NULL workflow or input raises 22004 (null value not allowed); nothing is written.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one');
SELECT throws_ok($$SELECT cyclone.submit(NULL)$$, '22004', NULL, 'NULL workflow');
SELECT throws_ok($$SELECT cyclone.submit('one', NULL)$$, '22004', NULL, 'NULL input');
SELECT throws_ok($$SELECT cyclone.submit(NULL, NULL)$$, '22004', NULL, 'both NULL');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');

SELECT * FROM finish();
ROLLBACK;
