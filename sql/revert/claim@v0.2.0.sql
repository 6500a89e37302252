-- Revert cyclone:claim
BEGIN;
DROP FUNCTION cyclone.renew(bigint, text, bigint, interval);
DROP FUNCTION cyclone.claim(text, text[], int, interval);
COMMIT;
