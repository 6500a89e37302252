-- Verify cyclone:claim_scale
BEGIN;
SELECT 1 / count(*)::int FROM pg_indexes
 WHERE schemaname = 'cyclone' AND indexname = 'cyclone_steps_limited_priority';
SELECT 1 / count(*)::int FROM pg_indexes
 WHERE schemaname = 'cyclone' AND indexname = 'cyclone_buckets_served';
-- Built, not left invalid by a CONCURRENTLY build that failed.
SELECT 1 / (count(*) = 2)::int FROM pg_index i WHERE i.indisvalid
   AND i.indexrelid IN ('cyclone.cyclone_steps_limited_priority'::regclass, 'cyclone.cyclone_buckets_served'::regclass);
ROLLBACK;
