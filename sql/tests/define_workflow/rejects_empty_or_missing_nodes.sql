-- A definition without nodes, with an empty nodes array, or with nodes that is not an array raises 22023.
BEGIN;
SELECT plan(5);

SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": []}')$$, '22023', NULL, 'empty nodes');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"max_attempts": 3}')$$, '22023', NULL, 'missing nodes');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": {"name": "a"}}')$$, '22023', NULL, 'nodes is an object, not an array');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '[{"name": "a"}]')$$, '22023', NULL, 'the definition is an array, not an object');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT * FROM finish();
ROLLBACK;
