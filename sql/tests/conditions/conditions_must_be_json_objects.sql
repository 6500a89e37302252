-- SPEC 16: when and unless are JSON objects (22023 otherwise, nothing written); the normalised definition
-- keeps them, and a node without SPEC 16 keys is normalised as before.
BEGIN;
SELECT plan(4);

SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "a", "when": [1]}]')$$, '22023',
                 'workflow "bad": node "a": when must be a JSON object', 'when is an object');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "a", "unless": "x"}]')$$, '22023',
                 'workflow "bad": node "a": unless must be a JSON object', 'unless is an object');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing written');
SELECT cyclone_test.define('good', '[{"name": "a", "when": {"input": {"x": 1}}}, {"name": "b"}]');
SELECT is((SELECT definition -> 'nodes' FROM cyclone.cyclone_workflows WHERE name = 'good'),
          '[{"name": "a", "kind": "task", "deps": [], "when": {"input": {"x": 1}}, "signal": null, "handler": "a",
             "timeout": null, "max_wait": null, "priority": 0, "workflow": null, "max_attempts": 3,
             "on_dep_failure": "fail_run"},
            {"name": "b", "kind": "task", "deps": [], "signal": null, "handler": "b", "timeout": null,
             "max_wait": null, "priority": 0, "workflow": null, "max_attempts": 3, "on_dep_failure": "fail_run"}]'::jsonb,
          'the condition is kept; the other node is normalised as before');

SELECT * FROM finish();
ROLLBACK;
