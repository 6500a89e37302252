-- A misspelt key, on the workflow or on a node, raises 22023 instead of being silently ignored.
BEGIN;
SELECT plan(3);

SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a"}], "max_attempt": 3}')$$,
                 '22023', NULL, 'unknown workflow key "max_attempt"');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "dependencies": []}]}')$$,
                 '22023', NULL, 'unknown node key "dependencies"');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT * FROM finish();
ROLLBACK;
