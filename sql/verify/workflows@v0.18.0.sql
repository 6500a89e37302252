-- Verify cyclone:workflows
BEGIN;
SELECT 'cyclone.define_workflow(text, jsonb)'::regprocedure,
       'cyclone._normalize_definition(text, jsonb)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.define_workflow(text, jsonb)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.define_workflow(text, jsonb)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.define_workflow(text, jsonb)', 'execute'))::int;
SELECT 'cyclone._definition_limits(text, text, jsonb)'::regprocedure, 'cyclone._merge_limits(jsonb, jsonb)'::regprocedure;
ROLLBACK;
