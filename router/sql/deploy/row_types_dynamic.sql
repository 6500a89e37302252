-- Deploy cyclone_router:row_types_dynamic
-- requires: routing
-- The routed listings' row types follow a shard's views at 0.21.0 (SPEC 16, issue 33): cyclone_v_runs gained
-- priority, cyclone_v_steps snoozes, progress, progress_at, item_index and item. Deploy the shards first: a router whose types
-- name a column its shards lack cannot list. The types' engine file is router/sql/engine/01_routing_tables.sql.
BEGIN;

ALTER TYPE cyclone.run_row ADD ATTRIBUTE priority int;
ALTER TYPE cyclone.step_row ADD ATTRIBUTE snoozes int, ADD ATTRIBUTE progress jsonb,
    ADD ATTRIBUTE progress_at timestamptz, ADD ATTRIBUTE item_index int, ADD ATTRIBUTE item jsonb;

COMMIT;
