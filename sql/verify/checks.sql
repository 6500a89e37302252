-- Verify cyclone:checks
BEGIN;
SELECT 'cyclone._require(text, boolean, text)'::regprocedure,
       'cyclone._require_given(text, boolean, text)'::regprocedure,
       'cyclone._check_payload(text, jsonb)'::regprocedure,
       'cyclone._bad_definition(text, text)'::regprocedure,
       'cyclone._name_problem(text)'::regprocedure,
       'cyclone._shown(text)'::regprocedure;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone._require(text, boolean, text)', 'execute'))::int;
-- The limits on what the engine stores (issue 30): JSON nested at most 100 levels and at most 1 MiB, a run
-- input a JSON object, a deadline at most 1,000,000 days, a long text cut to its head and tail.
SELECT 'cyclone._payload_problem(jsonb)'::regprocedure, 'cyclone._input_problem(jsonb)'::regprocedure,
       'cyclone._check_input(text, jsonb)'::regprocedure, 'cyclone._deadline_problem(interval)'::regprocedure,
       'cyclone._clipped(text)'::regprocedure;
SELECT 1 / (cyclone._payload_problem((repeat('[', 101) || '1' || repeat(']', 101))::jsonb) IS NOT NULL)::int;
SELECT 1 / (cyclone._payload_problem((repeat('[', 100) || '1' || repeat(']', 100))::jsonb) IS NULL)::int;
SELECT 1 / (cyclone._input_problem('[1, 2]') IS NOT NULL AND cyclone._input_problem('{}') IS NULL)::int;
SELECT 1 / (cyclone._deadline_problem(interval '1000001 days') IS NOT NULL)::int;
SELECT 1 / (char_length(cyclone._clipped(repeat('x', 100000))) <= 65536)::int;
ROLLBACK;
