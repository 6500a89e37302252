-- prune refuses a negative age or a non-positive limit with 22023 and a NULL
-- argument with 22004, deleting nothing.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one', 1) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT cyclone.cancel(:'run') \gset
SELECT cyclone.advance_time('1 day') \gset

SELECT throws_ok($$SELECT cyclone.prune('-1 second')$$, '22023', NULL, 'a negative older_than: 22023');
SELECT throws_ok($$SELECT cyclone.prune('1 hour', 0)$$, '22023', NULL, 'limit 0: 22023');
SELECT throws_ok($$SELECT cyclone.prune('1 hour', -5)$$, '22023', NULL, 'a negative limit: 22023');
SELECT throws_ok($$SELECT cyclone.prune(NULL)$$, '22004', NULL, 'a NULL older_than: 22004');
SELECT throws_ok($$SELECT cyclone.prune('1 hour', NULL)$$, '22004', NULL, 'a NULL limit: 22004');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 1, 'nothing was deleted');

SELECT * FROM finish();
ROLLBACK;
