-- Deploy cyclone:dynamic_columns
-- requires: tables
-- SPEC 16's first columns (issue 33): a run's priority (added to each of its nodes' priorities when its steps
-- are made), and on a step the snoozes it took (snooze() hands the step back without charging an attempt) and
-- the latest progress a handler reported (progress()), with when. Each is a new column with a constant default,
-- so adding it rewrites no row and the ALTER holds its lock for an instant; the day tables of history inherit
-- the columns. The tables' engine file is sql/engine/10_runs_tables.sql.
BEGIN;

ALTER TABLE cyclone.cyclone_runs ADD COLUMN priority int NOT NULL DEFAULT 0;
COMMENT ON COLUMN cyclone.cyclone_runs.priority IS
    'The run''s priority (-1000..1000, submit''s p_priority): added to each node''s priority on its steps.';

ALTER TABLE cyclone.cyclone_steps
    ADD COLUMN snoozes int NOT NULL DEFAULT 0,
    ADD COLUMN progress jsonb,
    ADD COLUMN progress_at timestamptz;
COMMENT ON COLUMN cyclone.cyclone_steps.snoozes IS 'How many times a handler snoozed the step (snooze()).';
COMMENT ON COLUMN cyclone.cyclone_steps.progress IS 'The latest progress a handler reported (progress()); NULL = none.';
COMMENT ON COLUMN cyclone.cyclone_steps.progress_at IS 'When progress was last reported.';

COMMIT;
