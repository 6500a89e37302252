-- Verify cyclone:workflows
BEGIN;
SELECT 'cyclone.define_workflow(text, jsonb)'::regprocedure,
       'cyclone._normalize_definition(text, jsonb)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.define_workflow(text, jsonb)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.define_workflow(text, jsonb)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.define_workflow(text, jsonb)', 'execute'))::int;
SELECT 'cyclone._definition_limits(text, text, jsonb)'::regprocedure, 'cyclone._merge_limits(jsonb, jsonb)'::regprocedure;
-- Issue 30: linear validation (Kahn's algorithm), at most 1,000 nodes, bounded intervals, child-workflow cycles.
SELECT 'cyclone._unordered_nodes(int, int[], int[])'::regprocedure, 'cyclone._child_cycle(text, jsonb)'::regprocedure;
SELECT 1 / (cyclone._unordered_nodes(3, ARRAY[1, 2, 3], ARRAY[2, 3, 1]) = ARRAY[1, 2, 3])::int;
SELECT 1 / (cardinality(cyclone._unordered_nodes(3, ARRAY[1, 2], ARRAY[2, 3])) = 0)::int;
SELECT 1 / (pg_get_functiondef('cyclone._normalize_definition(text, jsonb)'::regprocedure) ~ 'at most 1000 nodes')::int;
SELECT 1 / (pg_get_functiondef('cyclone._definition_interval(text, text, text, jsonb)'::regprocedure) ~ '366 days')::int;
SELECT 1 / (pg_get_functiondef('cyclone.define_workflow(text, jsonb)'::regprocedure) ~ '_child_cycle')::int;
ROLLBACK;
