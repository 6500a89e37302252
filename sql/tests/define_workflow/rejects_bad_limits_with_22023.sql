-- SPEC 12: an unknown limit name, or limits on a wait or child node, is 22023;
-- so is a malformed "limits" list. Nothing is written.
BEGIN;
SELECT plan(9);

SELECT cyclone.define_limit('l', 1);
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"limits": [{"name": "nope"}], "nodes": [{"name": "a"}]}')$$,
                 '22023', NULL, 'unknown limit at workflow level');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a", "limits": [{"name": "nope"}]}]}')$$,
                 '22023', NULL, 'unknown limit at node level');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a"}, {"name": "g", "kind": "wait", "deps": ["a"], "limits": [{"name": "l"}]}]}')$$,
                 '22023', NULL, 'limits on a wait node');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "c", "kind": "child", "workflow": "x", "limits": [{"name": "l"}]}]}')$$,
                 '22023', NULL, 'limits on a child node');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a", "limits": {"name": "l"}}]}')$$,
                 '22023', NULL, 'limits that are not an array');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a", "limits": [{"name": "l", "key": ""}]}]}')$$,
                 '22023', NULL, 'an empty key');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a", "limits": [{"name": "l", "key": "a..b"}]}]}')$$,
                 '22023', NULL, 'a key with an empty segment');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a", "limits": [{"name": "l"}, {"name": "l"}]}]}')$$,
                 '22023', NULL, 'a limit listed twice at one level');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows), 0, 'nothing was written');

SELECT * FROM finish();
ROLLBACK;
