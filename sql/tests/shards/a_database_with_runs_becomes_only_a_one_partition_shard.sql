-- A database of its own made its runs for one partition: it may become the
-- one shard of a one-partition router, and nothing else (55000).
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('job');
SELECT cyclone.submit('job') FROM generate_series(1, 5);
SELECT throws_ok($$SELECT cyclone.configure_shard('a', 2, '{0,1}')$$, '55000',
                 'configure_shard: this database holds runs made for 1 partition(s); it cannot become a shard of 2');
SELECT lives_ok($$SELECT cyclone.configure_shard('a', 1, '{0}')$$, 'one partition fits its runs');
SELECT is(cyclone.run_partition(cyclone.submit('job')), 0, 'and its new runs are on partition 0');

SELECT * FROM finish();
ROLLBACK;
