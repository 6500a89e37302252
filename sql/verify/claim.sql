-- Verify cyclone:claim
BEGIN;
SELECT 'cyclone.claim(text, text[], int, interval)'::regprocedure,
       'cyclone.renew(bigint, text, bigint, interval)'::regprocedure;
ROLLBACK;
