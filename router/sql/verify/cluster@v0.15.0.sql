-- Verify cyclone_router:cluster
BEGIN;
SELECT name, dsn FROM cyclone.cyclone_shards WHERE false;
SELECT partition, shard FROM cyclone.cyclone_partitions WHERE false;
SELECT 'plproxy.get_cluster_partitions(text)'::regprocedure, 'cyclone.configure_router(text[], text[], text[])'::regprocedure,
       'cyclone.locate_run(uuid)'::regprocedure, 'cyclone.locate_step(bigint)'::regprocedure;
ROLLBACK;
