-- SPEC 16: a sleep node has exactly one of duration and until (22023); duration and until apply to sleep nodes
-- only; a path's first segment is input or deps followed by one of the node's own deps; a root node's paths
-- start with input. Nothing is written.
BEGIN;
SELECT plan(8);

SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "z", "kind": "sleep"}]')$$, '22023',
                 'workflow "bad": node "z": a sleep node needs exactly one of "duration" and "until"', 'neither');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "z", "kind": "sleep", "duration": "1 hour",
                                                         "until": "input.at"}]')$$, '22023', NULL, 'both');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "z", "duration": "1 hour"}]')$$, '22023',
                 'workflow "bad": node "z": duration and until apply to sleep nodes only', 'on a task');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "z", "kind": "sleep", "until": "output.at"}]')$$,
                 '22023', 'workflow "bad": node "z": until must start with "input" or "deps", got "output.at"',
                 'an unknown first segment');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "a"}, {"name": "z", "kind": "sleep",
                                                         "until": "deps.b.at", "deps": ["a"]}]')$$, '22023',
                 'workflow "bad": node "z": until "deps.b.at" names "b", which is not one of the node''s deps',
                 'a dependency the node does not declare');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "z", "kind": "sleep", "until": "deps.a.at"}]')$$,
                 '22023', 'workflow "bad": node "z": until "deps.a.at" names a dependency, but a root node can only read its input',
                 'a root node reads its input only');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "z", "kind": "sleep", "until": "input..at"}]')$$,
                 '22023', NULL, 'an empty segment');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing written');

SELECT * FROM finish();
ROLLBACK;
