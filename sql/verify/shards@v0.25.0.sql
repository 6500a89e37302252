-- Verify cyclone:shards
BEGIN;
SELECT name, partition_count, partitions FROM cyclone.cyclone_shard WHERE false;
SELECT 1 / (cyclone._id_partition(cyclone._run_id_on(5), 8) = 5)::int;
SELECT 'cyclone.configure_shard(text, int, int[])'::regprocedure;
ROLLBACK;
