-- Verify cyclone:claim_workflow_queue
BEGIN;
SELECT 1 / count(*)::int FROM pg_indexes
 WHERE schemaname = 'cyclone' AND indexname = 'cyclone_steps_claimable_workflow';
-- Built, not left invalid by a CONCURRENTLY build that failed.
SELECT 1 / count(*)::int FROM pg_index i
 WHERE i.indisvalid AND i.indexrelid = 'cyclone.cyclone_steps_claimable_workflow'::regclass;
ROLLBACK;
