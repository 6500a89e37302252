-- Revert cyclone:tables
BEGIN;
DROP TABLE cyclone.cyclone_audit;
DROP TABLE cyclone.cyclone_signals;
DROP TABLE cyclone.cyclone_steps;
DROP TABLE cyclone.cyclone_runs;
DROP TABLE cyclone.cyclone_workflows;
COMMIT;
