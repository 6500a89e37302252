-- Verify cyclone:live_runs
BEGIN;
SELECT run_id, finished_at FROM cyclone.cyclone_archive_queue WHERE false;
-- No index of the live runs reads a column that ending a run changes.
SELECT 1 / (NOT EXISTS (
    SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid
     WHERE i.indrelid = 'cyclone.cyclone_runs'::regclass
       AND a.attname IN ('state', 'finished_at', 'output', 'paused_at')
       AND (a.attnum = ANY (i.indkey)
            OR pg_get_expr(i.indpred, i.indrelid) ~ ('\m' || a.attname || '\M'))))::int;
SELECT 1 / (SELECT reloptions @> '{fillfactor=40}' FROM pg_class WHERE oid = 'cyclone.cyclone_runs'::regclass)::int;
ROLLBACK;
