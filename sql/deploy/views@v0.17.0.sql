-- Deploy cyclone:views
-- requires: views@v0.12.0 tables step_workflow
-- The read side users query with plain SQL. completed_at is the terminal
-- timestamp of every terminal state (there is no discarded_at).
-- Reworked after v0.12.0: cyclone_v_steps reads each step's own workflow
-- (step_workflow.sql) instead of joining its run, so a query of steps reads
-- steps alone; same columns, same rows (every step has its run).
BEGIN;

CREATE OR REPLACE VIEW cyclone.cyclone_v_workflows AS
SELECT w.name, w.definition, w.updated_at FROM cyclone.cyclone_workflows w;
COMMENT ON VIEW cyclone.cyclone_v_workflows IS 'Registered workflows with their normalised definitions.';

CREATE OR REPLACE VIEW cyclone.cyclone_v_runs AS
SELECT r.id, r.workflow, r.state, r.input, r.output, r.created_at, r.started_at,
       r.finished_at, r.deadline_at, r.paused_at, r.parent_run_id, r.parent_step_id,
       r.idempotency_key
  FROM cyclone.cyclone_runs r;
COMMENT ON VIEW cyclone.cyclone_v_runs IS 'Runs. The error of a failed run is on its steps (see get_run).';

CREATE OR REPLACE VIEW cyclone.cyclone_v_steps AS
SELECT s.id, s.run_id, s.workflow, s.node, s.handler, s.kind, s.state, s.attempt, s.max_attempts,
       s.reclaims, s.error, s.error_kind, s.scheduled_at, s.started_at, s.finished_at AS completed_at,
       s.deps, s.on_dep_failure, s.priority, s.timeout, s.lease_owner, s.lease_expiry,
       s.lease_generation, s.heartbeat_at, s.signal, s.max_wait, s.wait_expires_at,
       s.child_run_id, s.input, s.output
  FROM cyclone.cyclone_steps s;
COMMENT ON VIEW cyclone.cyclone_v_steps IS 'Steps with their run''s workflow; completed_at is set for every terminal state.';

CREATE OR REPLACE VIEW cyclone.cyclone_v_dlq AS
SELECT * FROM cyclone.cyclone_v_steps WHERE state = 'discarded';
COMMENT ON VIEW cyclone.cyclone_v_dlq IS 'The dead-letter queue: discarded steps, with their run''s workflow.';

GRANT SELECT ON cyclone.cyclone_v_workflows, cyclone.cyclone_v_runs, cyclone.cyclone_v_steps,
                cyclone.cyclone_v_dlq TO cyclone_client, cyclone_admin;

COMMIT;
