-- Verify cyclone:checks
BEGIN;
SELECT 'cyclone._require(text, boolean, text)'::regprocedure,
       'cyclone._require_given(text, boolean, text)'::regprocedure,
       'cyclone._check_payload(text, jsonb)'::regprocedure,
       'cyclone._bad_definition(text, text)'::regprocedure,
       'cyclone._name_problem(text)'::regprocedure,
       'cyclone._shown(text)'::regprocedure;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone._require(text, boolean, text)', 'execute'))::int;
ROLLBACK;
