-- Revert cyclone:views
BEGIN;
DROP VIEW cyclone.cyclone_v_dlq;
DROP VIEW cyclone.cyclone_v_steps;
DROP VIEW cyclone.cyclone_v_runs;
DROP VIEW cyclone.cyclone_v_workflows;
COMMIT;
