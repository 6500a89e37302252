-- Deploy cyclone:tables
-- requires: clock
-- The engine's tables. States are text with named CHECKs, and cross-column
-- invariants make illegal rows unstorable: the lease columns are set iff a step
-- is running, finished_at is set iff a run or step is terminal.
BEGIN;

CREATE TABLE cyclone.cyclone_workflows (
    name       text PRIMARY KEY CONSTRAINT workflow_name_not_empty CHECK (name <> ''),
    definition jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT cyclone.now()
);
COMMENT ON TABLE cyclone.cyclone_workflows IS 'Registered workflow definitions, normalised by define_workflow().';

CREATE TABLE cyclone.cyclone_runs (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    workflow        text NOT NULL REFERENCES cyclone.cyclone_workflows (name),
    state           text NOT NULL DEFAULT 'running',
    input           jsonb NOT NULL DEFAULT '{}',
    output          jsonb,
    created_at      timestamptz NOT NULL DEFAULT cyclone.now(),
    started_at      timestamptz NOT NULL DEFAULT cyclone.now(),
    finished_at     timestamptz,
    deadline_at     timestamptz,
    paused_at       timestamptz,
    parent_run_id   uuid REFERENCES cyclone.cyclone_runs (id) ON DELETE SET NULL,
    parent_step_id  bigint,
    idempotency_key text,
    CONSTRAINT run_state_valid
        CHECK (state IN ('running', 'paused', 'completed', 'failed', 'cancelled')),
    CONSTRAINT run_finished_iff_terminal
        CHECK ((finished_at IS NOT NULL) = (state IN ('completed', 'failed', 'cancelled'))),
    CONSTRAINT run_paused_at_iff_paused
        CHECK ((paused_at IS NOT NULL) = (state = 'paused'))
);
COMMENT ON TABLE cyclone.cyclone_runs IS 'One row per run of a workflow.';

CREATE UNIQUE INDEX cyclone_runs_idempotency_key
    ON cyclone.cyclone_runs (workflow, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX cyclone_runs_deadline
    ON cyclone.cyclone_runs (deadline_at) WHERE state = 'running' AND deadline_at IS NOT NULL;
CREATE INDEX cyclone_runs_parent ON cyclone.cyclone_runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
CREATE INDEX cyclone_runs_finished ON cyclone.cyclone_runs (finished_at) WHERE finished_at IS NOT NULL;

-- The node's definition is copied onto each step (kind, handler, deps, policy,
-- limits), so that redefining a workflow never changes a run already submitted.
CREATE TABLE cyclone.cyclone_steps (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id           uuid NOT NULL REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE,
    node             text NOT NULL,
    handler          text NOT NULL,
    kind             text NOT NULL DEFAULT 'task',
    state            text NOT NULL DEFAULT 'pending',
    deps             text[] NOT NULL DEFAULT '{}',
    on_dep_failure   text NOT NULL DEFAULT 'fail_run',
    priority         int NOT NULL DEFAULT 0,
    attempt          int NOT NULL DEFAULT 0,
    max_attempts     int NOT NULL DEFAULT 25,
    reclaims         int NOT NULL DEFAULT 0,
    rerun_attempt    boolean NOT NULL DEFAULT false,
    scheduled_at     timestamptz NOT NULL DEFAULT cyclone.now(),
    started_at       timestamptz,
    timeout          interval,
    lease_owner      text,
    lease_expiry     timestamptz,
    lease_generation bigint NOT NULL DEFAULT 0,
    heartbeat_at     timestamptz,
    signal           text,
    child_workflow   text,
    max_wait         interval,
    wait_expires_at  timestamptz,
    child_run_id     uuid,
    input            jsonb NOT NULL DEFAULT '{}',
    output           jsonb,
    error            text,
    error_kind       text,
    contained        boolean NOT NULL DEFAULT false,
    finished_at      timestamptz,
    CONSTRAINT step_node_unique UNIQUE (run_id, node),
    CONSTRAINT step_kind_valid CHECK (kind IN ('task', 'wait', 'child')),
    CONSTRAINT step_state_valid CHECK (state IN
        ('pending', 'available', 'running', 'waiting', 'completed', 'discarded', 'cancelled')),
    CONSTRAINT step_policy_valid CHECK (on_dep_failure IN ('fail_run', 'cancel_branch')),
    CONSTRAINT step_error_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout', 'permanent',
        'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'cancelled')),
    CONSTRAINT step_attempts_valid CHECK (max_attempts > 0 AND attempt >= 0 AND reclaims >= 0),
    CONSTRAINT step_lease_iff_running CHECK (
        (state = 'running') = (lease_owner IS NOT NULL AND lease_expiry IS NOT NULL)),
    CONSTRAINT step_finished_iff_terminal CHECK (
        (finished_at IS NOT NULL) = (state IN ('completed', 'discarded', 'cancelled'))),
    CONSTRAINT step_cancelled_has_kind CHECK (
        state <> 'cancelled' OR (error_kind = 'cancelled' AND error IS NOT NULL)),
    CONSTRAINT step_discarded_has_kind CHECK (
        state <> 'discarded' OR (error_kind IS NOT NULL AND error_kind <> 'cancelled')),
    CONSTRAINT step_only_tasks_run CHECK (state NOT IN ('available', 'running') OR kind = 'task'),
    CONSTRAINT step_only_waits_wait CHECK (state <> 'waiting' OR kind IN ('wait', 'child'))
) WITH (fillfactor = 80);
COMMENT ON TABLE cyclone.cyclone_steps IS 'One row per DAG node of a run; the state machine of SPEC sections 6-9.';
COMMENT ON COLUMN cyclone.cyclone_steps.rerun_attempt IS
    'Set by a reclaim: the next claim runs the same attempt number again instead of attempt + 1.';
COMMENT ON COLUMN cyclone.cyclone_steps.contained IS
    'A discard contained by cancel_branch dependents; it did not fail the run.';

-- The claim path: only claimable rows are in this index, so finished rows never slow it.
CREATE INDEX cyclone_steps_claimable
    ON cyclone.cyclone_steps (priority, scheduled_at, id) WHERE state = 'available';
-- The sweep path. Keyed on id, not lease_expiry, so that a heartbeat changes no
-- indexed column and its update can stay HOT.
CREATE INDEX cyclone_steps_running
    ON cyclone.cyclone_steps (id) WHERE state = 'running';
-- max_wait expiry.
CREATE INDEX cyclone_steps_waiting
    ON cyclone.cyclone_steps (wait_expires_at) WHERE state = 'waiting';
CREATE INDEX cyclone_steps_child_run ON cyclone.cyclone_steps (child_run_id) WHERE child_run_id IS NOT NULL;
CREATE INDEX cyclone_steps_dlq ON cyclone.cyclone_steps (finished_at) WHERE state = 'discarded';

-- Signals that arrived before their wait node was reached.
CREATE TABLE cyclone.cyclone_signals (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      uuid NOT NULL REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE,
    name        text NOT NULL,
    payload     jsonb,
    received_at timestamptz NOT NULL DEFAULT cyclone.now()
);
CREATE INDEX cyclone_signals_run ON cyclone.cyclone_signals (run_id, name, id);
COMMENT ON TABLE cyclone.cyclone_signals IS 'Signals kept until their wait node is reached; consumed oldest first.';

-- What operators did and why: retry, retry_all, cancel, pause, resume.
CREATE TABLE cyclone.cyclone_audit (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT cyclone.now(),
    run_id    uuid NOT NULL REFERENCES cyclone.cyclone_runs (id) ON DELETE CASCADE,
    node      text,
    action    text NOT NULL CONSTRAINT audit_action_valid
        CHECK (action IN ('retry', 'cancel', 'pause', 'resume')),
    reason    text,
    actor     text NOT NULL DEFAULT session_user
);
CREATE INDEX cyclone_audit_run ON cyclone.cyclone_audit (run_id, id);
COMMENT ON TABLE cyclone.cyclone_audit IS 'Operator actions on runs, with the reason given.';

-- No role but the owner writes these: every write goes through a SECURITY
-- DEFINER function. cyclone_admin reads everything.
GRANT SELECT ON cyclone.cyclone_workflows, cyclone.cyclone_runs, cyclone.cyclone_steps,
                cyclone.cyclone_signals, cyclone.cyclone_audit TO cyclone_admin;

COMMIT;
