-- SPEC 12: a task node takes the workflow's limits and its own; a name at both
-- levels is taken once, with the node's key. Wait nodes take none.
BEGIN;
SELECT plan(3);

SELECT cyclone.define_limit('a', 1);
SELECT cyclone.define_limit('b', 1);
SELECT cyclone.define_limit('c', 1);
SELECT cyclone.define_workflow('w', '{"limits": [{"name": "a", "key": "x"}, {"name": "b"}],
  "nodes": [{"name": "t1"},
            {"name": "t2", "limits": [{"name": "c"}, {"name": "a", "key": "y.z"}]},
            {"name": "g", "kind": "wait", "deps": ["t1"]}]}');
SELECT is((SELECT n -> 'limits' FROM cyclone.cyclone_workflows, jsonb_array_elements(definition -> 'nodes') n
            WHERE n ->> 'name' = 't1'),
          '[{"name": "a", "key": "x"}, {"name": "b"}]'::jsonb, 't1 takes the workflow''s limits');
SELECT is((SELECT n -> 'limits' FROM cyclone.cyclone_workflows, jsonb_array_elements(definition -> 'nodes') n
            WHERE n ->> 'name' = 't2'),
          '[{"name": "a", "key": "y.z"}, {"name": "b"}, {"name": "c"}]'::jsonb,
          't2: a once, with the node''s key, then b, then its own c');
SELECT is((SELECT n -> 'limits' FROM cyclone.cyclone_workflows, jsonb_array_elements(definition -> 'nodes') n
            WHERE n ->> 'name' = 'g'), NULL, 'the wait node takes none');

SELECT * FROM finish();
ROLLBACK;
