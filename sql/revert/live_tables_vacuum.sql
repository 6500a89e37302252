-- Revert cyclone:live_tables_vacuum: the live tables' autovacuum cost delay back to the server's.
BEGIN;
SET LOCAL lock_timeout = '5s';
ALTER TABLE ONLY cyclone.cyclone_steps RESET (autovacuum_vacuum_cost_delay);
COMMIT;

BEGIN;
SET LOCAL lock_timeout = '5s';
ALTER TABLE ONLY cyclone.cyclone_runs RESET (autovacuum_vacuum_cost_delay);
COMMIT;
