-- SPEC 16: reaching a map node reads the JSON array at "over" and, in the same transaction, creates one step
-- of kind item per element (node: the map's name, item_index 0..n-1, item: the element) running the map's
-- handler with its max_attempts, timeout and priority; the map waits. claim returns items with item and
-- item_index, input the run input and deps the map's dependencies' outputs. When the last item completes,
-- the map completes in that transaction with the items' outputs in item_index order, and the DAG advances.
BEGIN;
SELECT plan(15);

SELECT cyclone_test.define('resize', '[
    {"name": "list"},
    {"name": "resize", "kind": "map", "over": "deps.list.images", "deps": ["list"], "handler": "resize_one",
     "max_attempts": 7, "timeout": "1 minute", "priority": 3},
    {"name": "report", "deps": ["resize"]}]');
SELECT cyclone.submit('resize', '{"size": 64}') AS run \gset
SELECT cyclone_test.run_node(:'run', 'list', '{"images": ["a.png", "b.png", "c.png"]}');

SELECT is(cyclone_test.state(:'run', 'resize'), 'waiting', 'the map waits');
SELECT results_eq($$SELECT kind, handler, state, item_index, item, max_attempts, timeout, priority
                      FROM cyclone.cyclone_steps WHERE item_index IS NOT NULL ORDER BY item_index$$,
    $$VALUES ('item', 'resize_one', 'available', 0, '"a.png"'::jsonb, 7, interval '1 minute', 3),
             ('item', 'resize_one', 'available', 1, '"b.png"'::jsonb, 7, interval '1 minute', 3),
             ('item', 'resize_one', 'available', 2, '"c.png"'::jsonb, 7, interval '1 minute', 3)$$,
    'one item per element, with the map''s handler, attempts, timeout and priority');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE node = 'resize' AND item_index IS NOT NULL),
          3, 'items carry the map''s node name');
SELECT is((SELECT item_index FROM cyclone.cyclone_v_steps WHERE item = '"b.png"'), 1, 'cyclone_v_steps shows item_index');
SELECT is(cyclone.explain_step((cyclone_test.step(:'run', 'resize')).id),
          '{"reason": "waiting_items", "done": 0, "total": 3}'::jsonb, 'explain_step: waiting_items');

CREATE TEMP TABLE claimed AS SELECT * FROM cyclone.claim('w1', ARRAY['resize_one'], 10);
SELECT is((SELECT count(*)::int FROM claimed), 3, 'claim returns the items');
SELECT results_eq($$SELECT item_index, item, kind FROM claimed ORDER BY item_index$$,
    $$VALUES (0, '"a.png"'::jsonb, 'item'), (1, '"b.png"'::jsonb, 'item'), (2, '"c.png"'::jsonb, 'item')$$,
    'with item and item_index');
SELECT is((SELECT input FROM claimed WHERE item_index = 0), '{"size": 64}'::jsonb, 'input is the run input');
SELECT is((SELECT deps FROM claimed WHERE item_index = 0), '{"list": {"images": ["a.png", "b.png", "c.png"]}}'::jsonb,
          'deps are the map''s dependencies'' outputs');
SELECT is(c.item_index, NULL, 'NULL for a task step') FROM cyclone.claim('w2', ARRAY['list', 'report'], 1) c;

SELECT cyclone.complete(step_id, 'w1', lease_generation, to_jsonb('small-' || (item #>> '{}')))
  FROM claimed WHERE item_index IN (2, 0);
SELECT is(cyclone_test.state(:'run', 'resize'), 'waiting', 'still waiting with an item left');
SELECT is(cyclone.explain_step((cyclone_test.step(:'run', 'resize')).id),
          '{"reason": "waiting_items", "done": 2, "total": 3}'::jsonb, 'two of three done');
SELECT cyclone.complete(step_id, 'w1', lease_generation, '"small-b.png"') FROM claimed WHERE item_index = 1;
SELECT is(cyclone_test.state(:'run', 'resize'), 'completed', 'the last item completes the map');
SELECT is((cyclone_test.step(:'run', 'resize')).output, '["small-a.png", "small-b.png", "small-c.png"]'::jsonb,
          'with the items'' outputs in item_index order');
SELECT is(cyclone_test.state(:'run', 'report'), 'available', 'and the DAG advances');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
