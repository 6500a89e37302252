-- SPEC 16: over is required on a map node and allowed on no other kind; max_items from 1 to 100,000 (default
-- 10,000); on_item_failure fail or collect (default fail); 22023, nothing written.
BEGIN;
SELECT plan(7);

SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "m", "kind": "map"}]')$$, '22023',
                 'workflow "bad": node "m": a map node needs "over"', 'over is required');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "t", "over": "input.x"}]')$$, '22023',
                 'workflow "bad": node "t": over, max_items and on_item_failure apply to map nodes only',
                 'over on a task');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "m", "kind": "map", "over": "input.x",
                                                         "max_items": 100001}]')$$, '22023',
                 'workflow "bad": node "m": max_items must be an integer from 1 to 100000, got 100001', 'max_items');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "m", "kind": "map", "over": "input.x",
                                                         "on_item_failure": "ignore"}]')$$, '22023', NULL,
                 'on_item_failure');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "m", "kind": "map", "over": "deps.x.y"}]')$$,
                 '22023', NULL, 'a root map reads its input only');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing written');
SELECT cyclone_test.define('fine', '[{"name": "m", "kind": "map", "over": "input.x"}]');
SELECT is((SELECT definition -> 'nodes' -> 0 FROM cyclone.cyclone_workflows WHERE name = 'fine')
            - ARRAY['deps', 'signal', 'timeout', 'max_wait', 'workflow', 'on_dep_failure'],
          '{"name": "m", "kind": "map", "over": "input.x", "handler": "m", "priority": 0, "max_items": 10000,
            "max_attempts": 3, "on_item_failure": "fail"}'::jsonb, 'the defaults are filled in');

SELECT * FROM finish();
ROLLBACK;
