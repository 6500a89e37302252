-- Verify cyclone:shards
BEGIN;
SELECT name, partition_count, partitions FROM cyclone.cyclone_shard WHERE false;
SELECT 1 / (cyclone._id_partition(cyclone._run_id_on(5, '2030-01-01'), 8) = 5)::int;
SELECT 'cyclone.configure_shard(text, int, int[])'::regprocedure;
-- 0.26.0: run ids in the order of time, laid out as UUID version 7.
SELECT 'cyclone._new_run_id(timestamptz)'::regprocedure, 'cyclone._run_id_on(int, timestamptz)'::regprocedure;
SELECT 1 / (substr(cyclone._new_run_id('2030-01-07 10:00:00.123+00')::text, 1, 15) = '01b8fbd1-2d7b-7')::int;
SELECT 1 / (SELECT count(*) = 1 FROM pg_proc WHERE proname = '_run_id_on' AND pronamespace = 'cyclone'::regnamespace)::int;
ROLLBACK;
