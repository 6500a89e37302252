-- Deploy cyclone:step_errors
-- requires: tables
-- Every error a step was given, one row each: a failed execution that is
-- retried (fail.sql) and every discard (runs.sql: _discard_steps). A step's own
-- error column keeps only the latest, and an operator retry clears it; this
-- keeps them all, until the run is pruned. Cancellations are not errors.
BEGIN;

CREATE TABLE cyclone.cyclone_step_errors (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id     uuid NOT NULL REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE,
    step_id    bigint NOT NULL REFERENCES cyclone.cyclone_steps (id) ON DELETE CASCADE,
    node       text NOT NULL,
    attempt    int NOT NULL,
    error_kind text NOT NULL CONSTRAINT step_errors_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout',
        'permanent', 'reclaim_limit', 'deadline', 'max_wait', 'child_failed')),
    error      text NOT NULL,
    worker     text,
    discarded  boolean NOT NULL,
    at         timestamptz NOT NULL
);
CREATE INDEX cyclone_step_errors_run ON cyclone.cyclone_step_errors (run_id, step_id, id);
CREATE INDEX cyclone_step_errors_step ON cyclone.cyclone_step_errors (step_id);
COMMENT ON TABLE cyclone.cyclone_step_errors IS
    'Every error a step was given: each retried failure and each discard, with the attempt and the worker.';
COMMENT ON COLUMN cyclone.cyclone_step_errors.worker IS 'The lease owner when the error came (NULL: no lease, e.g. a waiting node).';
COMMENT ON COLUMN cyclone.cyclone_step_errors.discarded IS 'The error discarded the step (else it was retried).';

GRANT SELECT ON cyclone.cyclone_step_errors TO cyclone_client, cyclone_admin;

COMMIT;
