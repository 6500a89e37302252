-- Revert cyclone:worker_registry
BEGIN;
DROP TABLE cyclone.cyclone_workers;
COMMIT;
