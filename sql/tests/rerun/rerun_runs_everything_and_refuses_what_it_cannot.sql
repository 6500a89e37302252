-- SPEC 17: without p_from_node every node runs again; the original must be terminal (55000 otherwise) and may
-- be archived; an unknown run or node is P0002.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('twice', '[{"name": "a", "handler": "ta"}, {"name": "b", "handler": "tb", "deps": ["a"]}]');
SELECT cyclone.submit('twice', '{"n": 1}') AS run \gset
SELECT throws_ok(format($$SELECT cyclone.rerun(%L)$$, :'run'), '55000', NULL, 'a running run: 55000');
SELECT cyclone_test.run_node(:'run', 'a');
SELECT cyclone_test.run_node(:'run', 'b');
SELECT cyclone.archive();
SELECT ok(cyclone_test.archived(:'run'), 'the original is archived');
SELECT cyclone.rerun(:'run') AS again \gset
SELECT is(ARRAY[cyclone_test.state(:'again', 'a'), cyclone_test.state(:'again', 'b')], ARRAY['available', 'pending'],
          'without a node every node runs again, from an archived original');
SELECT cyclone_test.define('twice', '[{"name": "a", "handler": "ta"}, {"name": "b", "handler": "tb", "deps": ["a"]},
                                      {"name": "c", "handler": "tc", "deps": ["b"]}]');
SELECT cyclone.rerun(:'run', 'b') AS third \gset
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'third'), 3,
          'a rerun runs the workflow as defined now (a node added since is in it)');
SELECT throws_ok($$SELECT cyclone.rerun(gen_random_uuid())$$, 'P0002', NULL, 'an unknown run: P0002');
SELECT throws_ok(format($$SELECT cyclone.rerun(%L, 'nope')$$, :'run'), 'P0002', NULL, 'an unknown node: P0002');
SELECT throws_ok($$SELECT cyclone.rerun(NULL)$$, '22004', NULL, 'a NULL run: 22004');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
