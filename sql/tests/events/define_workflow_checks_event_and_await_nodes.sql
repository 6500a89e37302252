-- SPEC 17: define_workflow checks event nodes (a "key" template of {path} parts, each a path of SPEC 16, braces
-- in pairs) and await nodes (a "run" path), 22023 and nothing written; "key" and "run" belong to their kinds;
-- max_wait applies to both; the normalised definition keeps them.
BEGIN;
SELECT plan(11);

SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "e", "kind": "event"}]')$$, '22023',
                 'workflow "bad": node "e": "key" applies to event nodes, which need it', 'an event node needs key');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "t", "key": "k"}]')$$, '22023', NULL,
                 'key on a task node');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "e", "kind": "event", "key": "a{input.x"}]')$$,
                 '22023', NULL, 'an unclosed brace');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "e", "kind": "event", "key": "a{{input.x}}"}]')$$,
                 '22023', NULL, 'nested braces');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "e", "kind": "event", "key": "a:{deps.x.id}"}]')$$,
                 '22023', NULL, 'a root node''s key path can only name its input');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "e", "kind": "event", "key": "a:{output.id}"}]')$$,
                 '22023', NULL, 'a key path must start with input or deps');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "w", "kind": "await"}]')$$, '22023', NULL,
                 'an await node needs run');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "a"}, {"name": "w", "kind": "await", "run": "deps.b.id", "deps": ["a"]}]')$$,
                 '22023', NULL, 'a run path must name one of the node''s deps');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "e", "kind": "event", "key": "k", "run": "input.r"}]')$$,
                 '22023', NULL, 'run on an event node');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT cyclone_test.define('good', '[{"name": "a"},
    {"name": "e", "kind": "event", "key": "pay:{input.id}/{deps.a.n}", "deps": ["a"], "max_wait": "1 day"},
    {"name": "w", "kind": "await", "run": "deps.a.run_id", "deps": ["a"], "max_wait": "2 days"}]');
SELECT is((SELECT jsonb_path_query_array(definition, '$.nodes[*] ? (@.kind == "event" || @.kind == "await")')
             FROM cyclone.cyclone_workflows WHERE name = 'good'),
          '[{"name": "e", "kind": "event", "key": "pay:{input.id}/{deps.a.n}", "deps": ["a"], "handler": "e",
             "max_wait": "1 day", "priority": 0, "on_dep_failure": "fail_run", "max_attempts": 3,
             "signal": null, "timeout": null, "workflow": null},
            {"name": "w", "kind": "await", "run": "deps.a.run_id", "deps": ["a"], "handler": "w",
             "max_wait": "2 days", "priority": 0, "on_dep_failure": "fail_run", "max_attempts": 3,
             "signal": null, "timeout": null, "workflow": null}]'::jsonb,
          'the normalised definition keeps key, run and max_wait');

SELECT * FROM finish();
ROLLBACK;
