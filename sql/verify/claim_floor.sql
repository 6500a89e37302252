-- Verify cyclone:claim_floor
BEGIN;
SELECT queue_bucket, priority, scheduled_at, id, set_at FROM cyclone.cyclone_claim_floor WHERE FALSE;
SELECT 1 / (c.relpersistence = 'u')::int FROM pg_class c WHERE c.oid = 'cyclone.cyclone_claim_floor'::regclass;
SELECT 1 / has_table_privilege('cyclone_admin', 'cyclone.cyclone_claim_floor', 'select')::int;
SELECT 1 / (NOT has_table_privilege('cyclone_worker', 'cyclone.cyclone_claim_floor', 'select'))::int;
ROLLBACK;
