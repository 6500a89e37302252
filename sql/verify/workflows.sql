-- Verify cyclone:workflows
BEGIN;
SELECT 'cyclone.define_workflow(text, jsonb)'::regprocedure,
       'cyclone._normalize_definition(text, jsonb)'::regprocedure;
ROLLBACK;
