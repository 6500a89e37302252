-- Revert cyclone:claim_floor
BEGIN;
DROP TABLE cyclone.cyclone_claim_floor;
COMMIT;
