-- Deploy cyclone:worker_registry
-- requires: schema
-- The worker registry (SPEC 18, issue 35): one row per worker that registered, so an idle worker is visible
-- and "no worker claims this step" is a fact, not a guess from how long a step waited. The table is
-- sql/engine/14_workers_tables.sql; the functions that write it are the change workers.
BEGIN;

CREATE TABLE cyclone.cyclone_workers (
    name         text PRIMARY KEY,
    info         jsonb NOT NULL DEFAULT '{}'
        CONSTRAINT workers_info_object CHECK (jsonb_typeof(info) = 'object'),
    started_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
) WITH (fillfactor = 50);
COMMENT ON TABLE cyclone.cyclone_workers IS
    'The worker registry (SPEC 18): one row per registered worker, refreshed on its poll interval.';
COMMENT ON COLUMN cyclone.cyclone_workers.info IS
    'What the worker says about itself (handlers, workflows, host, pid, version, concurrency...); untrusted.';
GRANT SELECT ON cyclone.cyclone_workers TO cyclone_admin;

COMMIT;
