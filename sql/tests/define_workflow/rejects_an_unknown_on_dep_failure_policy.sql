-- on_dep_failure other than fail_run or cancel_branch raises 22023 and writes nothing.
BEGIN;
SELECT plan(2);

SELECT throws_ok(
    $$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a"}, {"name": "b", "deps": ["a"], "on_dep_failure": "ignore"}]}')$$,
    '22023', NULL, 'on_dep_failure "ignore" is unknown');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT * FROM finish();
ROLLBACK;
