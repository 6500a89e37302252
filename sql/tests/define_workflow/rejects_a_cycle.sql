-- A self-dependency, a two-node cycle and a longer cycle each raise 22023 and write nothing.
BEGIN;
SELECT plan(5);

SELECT throws_ok(
    $$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "deps": ["a"]}]}')$$,
    '22023', NULL, 'a node that depends on itself');
SELECT throws_ok(
    $$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "deps": ["b"]}, {"name": "b", "deps": ["a"]}]}')$$,
    '22023', NULL, 'a two-node cycle');
SELECT throws_ok(
    $$SELECT cyclone.define_workflow('bad', '{"nodes": [
        {"name": "root"},
        {"name": "a", "deps": ["root", "d"]},
        {"name": "b", "deps": ["a"]},
        {"name": "c", "deps": ["b"]},
        {"name": "d", "deps": ["c"]},
        {"name": "leaf", "deps": ["d"]}]}')$$,
    '22023', NULL, 'a four-node cycle behind a valid root');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT lives_ok(
    $$SELECT cyclone.define_workflow('diamond', '{"nodes": [
        {"name": "a"}, {"name": "b", "deps": ["a"]}, {"name": "c", "deps": ["a"]}, {"name": "d", "deps": ["b", "c"]}]}')$$,
    'a diamond (shared ancestor, no cycle) is accepted');
SELECT * FROM finish();
ROLLBACK;
