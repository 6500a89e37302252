-- A child node must name the workflow it runs; without it define_workflow raises 22023.
BEGIN;
SELECT plan(3);

SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "c", "kind": "child"}]}')$$,
                 '22023', NULL, 'a child node without "workflow"');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "c", "kind": "child", "workflow": ""}]}')$$,
                 '22023', NULL, 'a child node with an empty "workflow"');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT * FROM finish();
ROLLBACK;
