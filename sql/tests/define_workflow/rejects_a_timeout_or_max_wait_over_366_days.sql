-- A node's timeout and max_wait are at most 366 days (a year however it is spelled: '1 year' counts as 360
-- days): a longer one raises 22023 and writes nothing. '300000 years' was accepted and made every sweep,
-- and so every tick, fail with a raw 22008 once a step with it was claimed.
BEGIN;
SELECT plan(8);

SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "a", "timeout": "367 days"}]')$$,
                 '22023', 'workflow "bad": node "a": timeout must be at most 366 days, got 367 days',
                 'a timeout of 367 days');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "a", "timeout": "300000 years"}]')$$,
                 '22023', NULL, 'a timeout of 300,000 years');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "w", "kind": "wait", "max_wait": "1 year 7 days"}]')$$,
                 '22023', NULL, 'a max_wait of a year and 7 days');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "c", "kind": "child", "workflow": "x", "max_wait": "178000000 years"}]')$$,
                 '22023', NULL, 'a child node''s max_wait of 178,000,000 years');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');

SELECT lives_ok($$SELECT cyclone_test.define('ok', '[{"name": "a", "timeout": "366 days"}, {"name": "w", "kind": "wait", "max_wait": "1 year"}]')$$,
                '366 days and 1 year are accepted');
SELECT is((SELECT definition #>> '{nodes,0,timeout}' FROM cyclone.cyclone_workflows WHERE name = 'ok'), '366 days',
          'the timeout is stored');
SELECT is((SELECT (definition #>> '{nodes,1,max_wait}')::interval FROM cyclone.cyclone_workflows WHERE name = 'ok'),
          interval '1 year', 'the max_wait is stored');

SELECT * FROM finish();
ROLLBACK;
