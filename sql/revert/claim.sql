-- Revert cyclone:claim
BEGIN;
DROP FUNCTION cyclone.renew(bigint, text, bigint, interval);
DROP FUNCTION cyclone.claim(text, text[], int, interval);
DROP FUNCTION cyclone._require_given(text, boolean, text);
DROP FUNCTION cyclone._require(text, boolean, text);
COMMIT;
