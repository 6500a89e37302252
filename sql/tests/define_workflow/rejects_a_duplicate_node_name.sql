-- Two nodes with the same name raise 22023 and write nothing.
BEGIN;
SELECT plan(2);

SELECT throws_ok(
    $$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a"}, {"name": "b"}, {"name": "a", "handler": "other"}]}')$$,
    '22023', NULL, 'node "a" is defined twice');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT * FROM finish();
ROLLBACK;
