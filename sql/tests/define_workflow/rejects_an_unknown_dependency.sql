-- A dep that names no node of the workflow raises 22023 and writes nothing.
BEGIN;
SELECT plan(3);

SELECT throws_ok(
    $$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a"}, {"name": "b", "deps": ["a", "z"]}]}')$$,
    '22023', NULL, 'dep "z" is unknown');
SELECT throws_ok(
    $$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "deps": ["A"]}, {"name": "b"}]}')$$,
    '22023', NULL, 'node names are case-sensitive: dep "A" is unknown');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT * FROM finish();
ROLLBACK;
