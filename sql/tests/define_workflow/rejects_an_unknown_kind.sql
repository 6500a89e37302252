-- A node kind other than task, wait or child raises 22023 and writes nothing.
BEGIN;
SELECT plan(3);

SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "kind": "cron"}]}')$$,
                 '22023', NULL, 'kind "cron" is unknown');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "kind": "Task"}]}')$$,
                 '22023', NULL, 'kinds are case-sensitive: "Task" is unknown');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT * FROM finish();
ROLLBACK;
