-- Verify cyclone:limits
BEGIN;
SELECT name, concurrency, rate, period, updated_at FROM cyclone.cyclone_limits WHERE false;
SELECT id, limit_name, bucket, served, debt, held_back, rate_debt FROM cyclone.cyclone_buckets WHERE false;
SELECT bucket_id, step_id FROM cyclone.cyclone_slots WHERE false;
SELECT id, bucket_id, at FROM cyclone.cyclone_bucket_claims WHERE false;
SELECT id, bucket_id FROM cyclone.cyclone_free_slots WHERE false;
SELECT buckets, queue_bucket, fair_bucket FROM cyclone.cyclone_steps WHERE false;
SELECT 1 / count(*) FROM pg_trigger WHERE tgname = 'cyclone_steps_release_slots';
SELECT 1 / count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
 WHERE c.relname = 'cyclone_steps_claimable' AND pg_get_indexdef(i.indexrelid) LIKE '%(queue_bucket, priority, scheduled_at, id)%';
SELECT 'cyclone._bucket_room(bigint, timestamptz)'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.define_limit(text, int, int, interval)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.drop_limit(text)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_client', 'cyclone.define_limit(text, int, int, interval)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.drop_limit(text)', 'execute'))::int;
SELECT 1 / (SELECT count(*) FROM pg_proc WHERE oid = 'cyclone._release_slots()'::regprocedure
                AND proconfig @> ARRAY['search_path=cyclone, pg_temp'])::int;
SELECT 1 / (NOT has_table_privilege('cyclone_worker', 'cyclone.cyclone_free_slots', 'select'))::int;
SELECT 1 / (SELECT count(*) FROM pg_proc WHERE oid = 'cyclone._release_slots()'::regprocedure
                AND prosrc LIKE '%cyclone_free_slots%')::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone.drop_limit(text)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- Issue 30: a rate period is at most 366 days.
SELECT 1 / (pg_get_functiondef('cyclone.define_limit(text, int, int, interval)'::regprocedure)
            ~ 'p_period must be at most 366 days')::int;
ROLLBACK;
