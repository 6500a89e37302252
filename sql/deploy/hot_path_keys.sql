-- Deploy cyclone:hot_path_keys
-- requires: coordination_tables
-- Issue 32: the three foreign keys the hot path paid for on every run go; the engine keeps what they kept,
-- and check_invariants() reports a break (invariants.sql: step_without_run, signal_without_run,
-- run_of_unknown_workflow). cyclone_steps.run_id's check was a query and a FOR KEY SHARE lock of the run for
-- each step inserted, and its cascade a query for each run archived; cyclone_signals.run_id's cascade another;
-- cyclone_runs.workflow's check locked the workflow's row for each run submitted (a multixact per submit while
-- several clients submit one workflow). The engine inserts a run's steps in the statement after the run,
-- deletes them before it (archive, prune, and complete_many's runs of one step, which delete the signals too),
-- and submit finds the workflow or raises P0002; nothing deletes a workflow.
-- Under load (issue 37): each foreign key goes in a transaction of its own that waits at most 5 seconds for
-- its locks (the table and the one it references, taken for a catalog change only): a deploy that cannot
-- have them fails with 55P03 and nothing changed; `cyclone migrate` can be run again.
BEGIN;
SET LOCAL lock_timeout = '5s';
ALTER TABLE cyclone.cyclone_signals DROP CONSTRAINT cyclone_signals_run_id_fkey;
COMMIT;

BEGIN;
SET LOCAL lock_timeout = '5s';
ALTER TABLE cyclone.cyclone_steps DROP CONSTRAINT cyclone_steps_run_id_fkey;
COMMIT;

BEGIN;
SET LOCAL lock_timeout = '5s';
ALTER TABLE cyclone.cyclone_runs DROP CONSTRAINT cyclone_runs_workflow_fkey;
COMMIT;
