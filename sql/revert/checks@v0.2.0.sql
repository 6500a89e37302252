-- Revert cyclone:checks
BEGIN;
DROP FUNCTION cyclone._bad_definition(text, text);
DROP FUNCTION cyclone._check_payload(text, jsonb);
DROP FUNCTION cyclone._require_given(text, boolean, text);
DROP FUNCTION cyclone._require(text, boolean, text);
COMMIT;
