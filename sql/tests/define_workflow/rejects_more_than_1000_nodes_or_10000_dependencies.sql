-- A definition has at most 1,000 nodes and 10,000 dependencies in all: more raises 22023 and writes
-- nothing. Issue 30, finding 5: validation was cubic in the nodes (a chain of 1,000 took 8.9 s, of 2,000
-- 62 s); it is linear now, so the largest chain allowed is simply accepted (this test times nothing).
BEGIN;
SELECT plan(7);

SELECT throws_ok(
    $$SELECT cyclone.define_workflow('wide', jsonb_build_object('nodes',
        (SELECT jsonb_agg(jsonb_build_object('name', 'n' || i)) FROM generate_series(1, 1001) i)))$$,
    '22023', 'workflow "wide": a workflow has at most 1000 nodes, got 1001', '1,001 nodes raise 22023');
SELECT throws_ok(
    $$SELECT cyclone.define_workflow('dense', jsonb_build_object('nodes',
        (SELECT jsonb_agg(jsonb_build_object('name', 'n' || i, 'deps',
                   (SELECT coalesce(jsonb_agg('n' || j), '[]') FROM generate_series(greatest(1, i - 100), i - 1) j)))
           FROM generate_series(1, 151) i)))$$,
    '22023', 'workflow "dense": a workflow has at most 10000 dependencies in all, got 10050',
    '10,050 dependencies raise 22023');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name IN ('wide', 'dense')), 0, 'nothing was written');

SELECT lives_ok(
    $$SELECT cyclone.define_workflow('chain', jsonb_build_object('nodes',
        (SELECT jsonb_agg(CASE WHEN i = 1 THEN jsonb_build_object('name', 'n1')
                               ELSE jsonb_build_object('name', 'n' || i, 'deps', jsonb_build_array('n' || (i - 1))) END
                          ORDER BY i)
           FROM generate_series(1, 1000) i)))$$,
    'a chain of 1,000 nodes is accepted');
SELECT is((SELECT jsonb_array_length(definition -> 'nodes') FROM cyclone.cyclone_workflows WHERE name = 'chain'), 1000,
          'with its 1,000 nodes, in order');
SELECT is((SELECT definition #>> '{nodes,999,deps,0}' FROM cyclone.cyclone_workflows WHERE name = 'chain'), 'n999',
          'the last node depends on the one before');
SELECT throws_ok(
    $$SELECT cyclone.define_workflow('ring', jsonb_build_object('nodes',
        (SELECT jsonb_agg(jsonb_build_object('name', 'n' || i, 'deps', jsonb_build_array('n' || (i % 1000 + 1))))
           FROM generate_series(1, 1000) i)))$$,
    '22023', 'workflow "ring": the dependencies form a cycle through n1, n10, n100, n1000, n101, n102, n103, n104, n105, n106, n107, n108, n109, n11, n110, n111, n112, n113, n114, n115 and 980 more',
    'a ring of 1,000 nodes is a cycle, named by its first 20 nodes');

SELECT * FROM finish();
ROLLBACK;
