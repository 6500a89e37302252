-- configure_shard checks its arguments (22004, 22023) and refuses a
-- configuration the runs already held would not fit (55000), writing nothing.
BEGIN;
SELECT plan(11);

SELECT throws_ok($$SELECT cyclone.configure_shard(NULL, 4, '{0}')$$, '22004');
SELECT throws_ok($$SELECT cyclone.configure_shard('Shard A', 4, '{0}')$$, '22023',
                 'configure_shard: shard name "Shard A" must be 1 to 63 of a-z, 0-9, _ and -');
SELECT throws_ok($$SELECT cyclone.configure_shard('a', 6, '{0}')$$, '22023',
                 'configure_shard: p_partition_count must be a power of two from 1 to 1024, not 6');
SELECT throws_ok($$SELECT cyclone.configure_shard('a', 2048, '{0}')$$, '22023');
SELECT throws_ok($$SELECT cyclone.configure_shard('a', 4, '{0,4}')$$, '22023',
                 'configure_shard: p_partitions must be distinct partitions from 0 to 3, not {0,4}');
SELECT throws_ok($$SELECT cyclone.configure_shard('a', 4, '{1,1}')$$, '22023');
SELECT throws_ok($$SELECT cyclone.configure_shard('a', 4, '{}')$$, '22023');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_shard), 0, 'nothing was configured');

SELECT cyclone.configure_shard('a', 4, '{0,1,2,3}');
SELECT cyclone_test.one_step('job');
SELECT cyclone.submit('job') FROM generate_series(1, 40);
SELECT throws_ok($$SELECT cyclone.configure_shard('a', 8, '{0,1,2,3}')$$, '55000',
                 'configure_shard: this database holds runs made for 4 partition(s); it cannot become a shard of 8');
SELECT throws_like($$SELECT cyclone.configure_shard('a', 4, '{0}')$$,
                   'configure_shard: this database holds runs of partition %, which is not in {0}',
                   'giving up a partition that holds runs is refused');
SELECT is((SELECT partitions FROM cyclone.cyclone_shard), '{0,1,2,3}', 'and the configuration is unchanged');

SELECT * FROM finish();
ROLLBACK;
