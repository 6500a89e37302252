-- deps maps each dependency's node name to its output, and only the step's
-- own dependencies.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('dag', '[{"name":"a"},{"name":"b"},{"name":"c","deps":["a","b"]},
                                    {"name":"d","deps":["a"]}]') AS wf \gset
SELECT cyclone.submit('dag', '{"k": "v"}') AS run \gset

SELECT step_id AS a_id, lease_generation AS a_gen, deps AS a_deps FROM cyclone_test.claim_node(:'run', 'a') \gset
SELECT is(:'a_deps'::jsonb, '{}'::jsonb, 'a root step gets empty deps');
SELECT ok(cyclone.complete(:a_id, 'w1', :a_gen, '{"x": 1}'), 'a completes');
SELECT ok(cyclone_test.run_node(:'run', 'b', '[1, 2]'), 'b completes');
SELECT results_eq(
    $$SELECT node, input, deps FROM cyclone.claim('w2', NULL, 10)$$,
    $$VALUES ('c'::text, '{"k": "v"}'::jsonb, '{"a": {"x": 1}, "b": [1, 2]}'::jsonb),
             ('d'::text, '{"k": "v"}'::jsonb, '{"a": {"x": 1}}'::jsonb)$$,
    'c gets the outputs of a and b, d only the output of a; both get the run input');

SELECT * FROM finish();
ROLLBACK;
