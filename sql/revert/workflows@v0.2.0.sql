-- Revert cyclone:workflows
BEGIN;
DROP FUNCTION cyclone.define_workflow(text, jsonb);
DROP FUNCTION cyclone._normalize_definition(text, jsonb);
DROP FUNCTION cyclone._positive_int(text, text, jsonb);
DROP FUNCTION cyclone._definition_interval(text, text, text, jsonb);
COMMIT;
