-- Revert cyclone:hot_path_keys: the three foreign keys come back, added NOT VALID (a catalog change) and
-- validated in a second transaction (which reads the tables without blocking writes).
BEGIN;
SET LOCAL lock_timeout = '5s';
ALTER TABLE cyclone.cyclone_runs ADD CONSTRAINT cyclone_runs_workflow_fkey
    FOREIGN KEY (workflow) REFERENCES cyclone.cyclone_workflows (name) NOT VALID;
ALTER TABLE cyclone.cyclone_steps ADD CONSTRAINT cyclone_steps_run_id_fkey
    FOREIGN KEY (run_id) REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE NOT VALID;
ALTER TABLE cyclone.cyclone_signals ADD CONSTRAINT cyclone_signals_run_id_fkey
    FOREIGN KEY (run_id) REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE NOT VALID;
COMMIT;

BEGIN;
ALTER TABLE cyclone.cyclone_runs VALIDATE CONSTRAINT cyclone_runs_workflow_fkey;
ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT cyclone_steps_run_id_fkey;
ALTER TABLE cyclone.cyclone_signals VALIDATE CONSTRAINT cyclone_signals_run_id_fkey;
COMMIT;
