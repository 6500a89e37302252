-- The child's success completes the parent's child node with the child's
-- output and advances the parent, in the child's finishing transaction.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('kid') \gset
SELECT cyclone_test.define('mom', '[{"name": "c", "kind": "child", "workflow": "kid"},
                                    {"name": "b", "deps": ["c"]}]') \gset
SELECT cyclone.submit('mom') AS run \gset
SELECT (cyclone_test.step(:'run', 'c')).child_run_id AS child \gset
SELECT cyclone.advance_time('1 minute') \gset

SELECT is(cyclone_test.run_node(:'child', 'work', '{"invoice": 7}'), true, 'the child''s step completes');
SELECT is(cyclone_test.run_state(:'child'), 'completed', 'the child run is completed');
SELECT results_eq(
    format($$SELECT state, output, finished_at FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'c'$$, :'run'),
    format($$VALUES ('completed', '{"work": {"invoice": 7}}'::jsonb, %L::timestamptz)$$, cyclone.now()),
    'the child node completed with the child run''s output');
SELECT is(cyclone_test.state(:'run', 'b'), 'available', 'the parent advanced: b is available');
SELECT results_eq($$SELECT node, deps FROM cyclone.claim('w1', ARRAY['b'])$$,
                  $$VALUES ('b', '{"c": {"work": {"invoice": 7}}}'::jsonb)$$,
                  'b sees the child output under deps');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the parent is still running');

SELECT * FROM finish();
ROLLBACK;
