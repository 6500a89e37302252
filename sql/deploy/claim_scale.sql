-- Deploy cyclone:claim_scale
-- requires: claim_floor
-- Two indexes for claims at scale (issue 32): cyclone_steps_limited_priority, the priorities with an
-- available step that takes a limit (each with its earliest scheduled_at), and cyclone_buckets_served, the
-- keyed buckets in the round-robin's order: a claim walks the keyed queues one priority at a time in that
-- order and stops once it has read as many as it asks for. The tables are sql/engine/10_runs_tables.sql's and 11_limits_tables.sql's;
-- claim reads them (change claim).
-- Under load: each index is built CONCURRENTLY, outside a transaction, so that claims and reports go on while
-- it scans its table; IF NOT EXISTS: a deploy run again after one that stopped here does not trip over one
-- already built. A claim of the release before never reads them.
CREATE INDEX CONCURRENTLY IF NOT EXISTS cyclone_steps_limited_priority
    ON cyclone.cyclone_steps (priority, scheduled_at) WHERE state = 'available' AND queue_bucket > 0;
CREATE INDEX CONCURRENTLY IF NOT EXISTS cyclone_buckets_served
    ON cyclone.cyclone_buckets (served NULLS FIRST, id) WHERE bucket <> '';
