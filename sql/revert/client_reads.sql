-- Revert cyclone:client_reads
BEGIN;

REVOKE SELECT ON cyclone.cyclone_runs, cyclone.cyclone_steps FROM cyclone_client;

COMMIT;
