-- Deploy cyclone:hot_path_keys
-- requires: coordination_tables
-- Issue 32: the three foreign keys the hot path paid for on every run go; the engine keeps what they kept,
-- and check_invariants() reports a break (invariants.sql: step_without_run, signal_without_run,
-- run_of_unknown_workflow). cyclone_steps.run_id's check was a query and a FOR KEY SHARE lock of the run for
-- each step inserted, and its cascade a query for each run archived; cyclone_signals.run_id's cascade another;
-- cyclone_runs.workflow's check locked the workflow's row for each run submitted (a multixact per submit while
-- several clients submit one workflow). The engine inserts a run's steps in the statement after the run,
-- deletes them before it (archive, prune, and complete_many's runs of one step), deletes a run's kept signals
-- with it, and submit finds the workflow or raises P0002; nothing deletes a workflow.
-- Under load (issue 37): dropping a foreign key locks both its tables, and the workers lock the runs' and the
-- steps' tables in both orders (a claim: steps, then runs; complete_many: runs, then steps), so a deploy that
-- held one while it queued for the other could meet them in a deadlock, which PostgreSQL breaks only after
-- deadlock_timeout (1 s) by failing a worker's call. So the transaction takes every lock it needs first, in
-- one LOCK TABLE, and waits at most half a second for them (lock_timeout, under deadlock_timeout): behind a
-- long transaction or in such a cycle it gives up first, with 55P03 and nothing changed, the workers go on,
-- and `cyclone migrate` deploys again (--retries). Claims wait for it half a second at most.
BEGIN;
SET LOCAL lock_timeout = '500ms';
LOCK TABLE cyclone.cyclone_steps, cyclone.cyclone_runs, cyclone.cyclone_signals, cyclone.cyclone_workflows
    IN ACCESS EXCLUSIVE MODE;
ALTER TABLE cyclone.cyclone_signals DROP CONSTRAINT IF EXISTS cyclone_signals_run_id_fkey;
ALTER TABLE cyclone.cyclone_steps DROP CONSTRAINT IF EXISTS cyclone_steps_run_id_fkey;
ALTER TABLE cyclone.cyclone_runs DROP CONSTRAINT IF EXISTS cyclone_runs_workflow_fkey;
COMMIT;
