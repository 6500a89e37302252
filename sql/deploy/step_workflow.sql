-- Deploy cyclone:step_workflow
-- requires: tables
-- Each step carries its run's workflow (runs.sql: _insert_steps writes it; a
-- run's workflow never changes). What is counted or paged by workflow (the
-- gauges of metrics(), cyclone_v_steps, the dead letters of one workflow)
-- then reads steps and their indexes alone, never a run row a step.
-- Deploying it on a database that has steps fills the column in one UPDATE
-- (a new version of every step row: plan it like any rewrite; see
-- docs/operations.md, "Deploying the schema").
BEGIN;

ALTER TABLE cyclone.cyclone_steps ADD COLUMN workflow text;
UPDATE cyclone.cyclone_steps s SET workflow = r.workflow FROM cyclone.cyclone_runs r WHERE r.id = s.run_id;
ALTER TABLE cyclone.cyclone_steps ALTER COLUMN workflow SET NOT NULL;
COMMENT ON COLUMN cyclone.cyclone_steps.workflow IS 'The workflow of the step''s run, written with the step.';

COMMIT;
