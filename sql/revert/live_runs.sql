-- Revert cyclone:live_runs
BEGIN;

DROP TABLE cyclone.cyclone_archive_queue;
ALTER TABLE cyclone.cyclone_runs RESET (fillfactor);
DROP INDEX cyclone.cyclone_runs_deadline;
CREATE INDEX cyclone_runs_deadline
    ON cyclone.cyclone_runs (deadline_at) WHERE state = 'running' AND deadline_at IS NOT NULL;
CREATE INDEX cyclone_runs_finished ON cyclone.cyclone_runs (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX cyclone_runs_state_created ON cyclone.cyclone_runs (state, created_at, id);
CREATE INDEX cyclone_runs_live
    ON cyclone.cyclone_runs (id, workflow, state) WHERE state IN ('running', 'paused');

COMMIT;
