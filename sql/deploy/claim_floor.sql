-- Deploy cyclone:claim_floor
-- requires: hot_path_keys
-- cyclone_claim_floor: where claim's walk of queue 0 may start, a key tick keeps at or below every available
-- step, so that claims no longer read the index entries of the steps claimed before it (issue 37). The table
-- is sql/engine/10_runs_tables.sql's; tick keeps it (_refresh_claim_floor, change claim) and claim reads it.
-- A new table that nothing reads yet: no lock on a table the workers use.
BEGIN;

CREATE UNLOGGED TABLE cyclone.cyclone_claim_floor (
    queue_bucket int PRIMARY KEY,
    priority     int NOT NULL,
    scheduled_at timestamptz NOT NULL,
    id           bigint NOT NULL,
    set_at       timestamptz NOT NULL
);
COMMENT ON TABLE cyclone.cyclone_claim_floor IS
    'Where claim''s walk of queue 0 may start: a key at or below every available step, kept by tick (a hint).';
GRANT SELECT ON cyclone.cyclone_claim_floor TO cyclone_admin;

COMMIT;
