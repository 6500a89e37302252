-- SPEC 6: p_workflows restricts a claim to runs of those workflows, so two
-- services whose workflows share a handler name never take each other's steps.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.define('orders', '[{"name":"prepare"}]') AS orders \gset
SELECT cyclone_test.define('billing', '[{"name":"prepare"}]') AS billing \gset
SELECT cyclone.submit('orders') AS o \gset
SELECT cyclone.submit('billing') AS b \gset

SELECT is_empty($$SELECT * FROM cyclone.claim('w1', ARRAY['prepare'], 10, '30 seconds', ARRAY['nope'])$$,
                'an unknown workflow claims nothing');
SELECT is_empty($$SELECT * FROM cyclone.claim('w1', NULL, 10, '30 seconds', ARRAY[]::text[])$$,
                'an empty workflow list claims nothing');
SELECT results_eq($$SELECT workflow, node FROM cyclone.claim('w1', ARRAY['prepare'], 10, '30 seconds', ARRAY['orders'])$$,
                  $$VALUES ('orders'::text, 'prepare'::text)$$, 'the same handler name: only the orders step');
SELECT is(cyclone_test.state(:'b', 'prepare'), 'available', 'billing''s prepare is left available');
SELECT results_eq($$SELECT workflow FROM cyclone.claim('w2', NULL, 10, '30 seconds', ARRAY['billing', 'x'])$$,
                  $$VALUES ('billing'::text)$$, 'workflows without handlers: any handler of those workflows');

SELECT cyclone.submit('orders') AS o2 \gset
SELECT cyclone.submit('billing') AS b2 \gset
SELECT set_eq($$SELECT workflow FROM cyclone.claim('w3', ARRAY['prepare'], 10, '30 seconds', NULL)$$,
              $$VALUES ('orders'), ('billing')$$, 'p_workflows NULL claims any workflow');

SELECT cyclone.submit('orders') AS o3 \gset
SELECT results_eq($$SELECT workflow FROM cyclone.claim('w4', ARRAY['other'], 10, '30 seconds', ARRAY['orders'])$$,
                  $$SELECT NULL::text WHERE false$$, 'both filters apply: the handler must match too');
SELECT results_eq($$SELECT workflow FROM cyclone.claim(p_worker => 'w4', p_workflows => ARRAY['orders'], p_limit => 5)$$,
                  $$VALUES ('orders'::text)$$, 'named arguments: p_workflows alone');
SELECT is((SELECT count(*)::int FROM pg_proc WHERE proname = 'claim' AND pronamespace = 'cyclone'::regnamespace), 1,
          'one claim function: calls with one to four arguments stay unambiguous');

SELECT * FROM finish();
ROLLBACK;
