-- Deploy cyclone:claim_scale
-- requires: claim_floor
-- Two indexes for a claim at scale (issue 32): cyclone_steps_limited_priority, the priorities of the available
-- steps that take a limit (min = max tells a claim that one priority waits), and cyclone_buckets_served, the
-- keyed buckets in the round-robin's order, which such a claim walks and stops once it has read as many
-- queues as it asks for steps. The tables are sql/engine/10_runs_tables.sql's and 11_limits_tables.sql's;
-- claim reads them (change claim).
-- Under load: each index is built CONCURRENTLY, outside a transaction, so that claims and reports go on while
-- it scans its table; IF NOT EXISTS: a deploy run again after one that stopped here does not trip over one
-- already built. A claim of the release before never reads them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS cyclone_steps_limited_priority
    ON cyclone.cyclone_steps (priority) WHERE state = 'available' AND queue_bucket > 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS cyclone_buckets_served
    ON cyclone.cyclone_buckets (served NULLS FIRST, id) WHERE bucket <> '';
