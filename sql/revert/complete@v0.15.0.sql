-- Revert cyclone:complete
BEGIN;
DROP FUNCTION cyclone.complete_many(text, bigint[], bigint[], jsonb[]);
DROP FUNCTION cyclone.complete(bigint, text, bigint, jsonb);
COMMIT;
