-- Deploy cyclone_router:row_types_coordination
-- requires: row_types_dynamic
-- The routed listings' row types follow a shard's views at 0.22.0 (SPEC 17, issue 34): cyclone_v_runs gained
-- rerun_of, cyclone_v_steps event_key, awaited_run_id and spec. Deploy the shards first: a router whose types
-- name a column its shards lack cannot list. The types' engine file is router/sql/engine/01_routing_tables.sql.
BEGIN;

ALTER TYPE cyclone.run_row ADD ATTRIBUTE rerun_of uuid;
ALTER TYPE cyclone.step_row ADD ATTRIBUTE event_key text, ADD ATTRIBUTE awaited_run_id uuid, ADD ATTRIBUTE spec jsonb;

COMMIT;
