-- Deploy cyclone:claim_workflow_queue
-- requires: claim_scale
-- An index for claims at scale (issue 32): cyclone_steps_claimable_workflow, queue 0 of each workflow in claim
-- order. The claim of a worker that serves one workflow walks it, so the other workflows' backlog ahead of its
-- steps costs it nothing. The table is sql/engine/10_runs_tables.sql's; claim reads it (change claim).
-- Under load: built CONCURRENTLY, outside a transaction, so that claims and reports go on while it scans the
-- table; IF NOT EXISTS: a deploy run again after one that stopped here does not trip over one already built.
-- A claim of the release before never reads it.
CREATE INDEX CONCURRENTLY IF NOT EXISTS cyclone_steps_claimable_workflow
    ON cyclone.cyclone_steps (workflow, priority, scheduled_at, id) WHERE state = 'available' AND queue_bucket = 0;
