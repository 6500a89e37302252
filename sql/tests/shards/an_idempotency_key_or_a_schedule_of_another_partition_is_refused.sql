-- A shard holds the runs of its partitions only: a submit whose idempotency
-- key hashes to a partition it does not hold is refused (55000), as is a
-- schedule whose name does; those of its own partitions work and deduplicate.
BEGIN;
SELECT plan(7);

SELECT cyclone.configure_shard('shard-a', 4, '{0,2}');
SELECT cyclone_test.one_step('job');
SELECT k AS mine FROM generate_series(1, 100) k WHERE cyclone.key_partition('job', 'k' || k) = 2 LIMIT 1 \gset
SELECT k AS theirs FROM generate_series(1, 100) k WHERE cyclone.key_partition('job', 'k' || k) = 3 LIMIT 1 \gset

SELECT cyclone.submit('job', p_idempotency_key => 'k' || :mine) AS first \gset
SELECT is(cyclone.run_partition(:'first'), 2, 'a keyed run is on its key''s partition');
SELECT is(cyclone.submit('job', p_idempotency_key => 'k' || :mine), :'first'::uuid, 'and its key deduplicates');
SELECT throws_like(format($$SELECT cyclone.submit('job', p_idempotency_key => 'k%s')$$, :theirs),
                   '%belongs to partition 3, which shard shard-a does not hold%',
                   'a key of another partition is refused');
SELECT throws_ok(format($$SELECT cyclone.submit('job', p_idempotency_key => 'k%s')$$, :theirs), '55000');

SELECT n AS mine_s FROM generate_series(1, 100) n WHERE cyclone.schedule_partition('s' || n) = 0 LIMIT 1 \gset
SELECT n AS theirs_s FROM generate_series(1, 100) n WHERE cyclone.schedule_partition('s' || n) = 1 LIMIT 1 \gset
SELECT lives_ok(format($$SELECT cyclone.schedule('s%s', '* * * * *', 'job')$$, :mine_s),
                'a schedule of its own partition is kept');
SELECT throws_ok(format($$SELECT cyclone.schedule('s%s', '* * * * *', 'job')$$, :theirs_s), '55000',
                 format('schedule "s%s" belongs to partition 1, which shard shard-a does not hold', :theirs_s),
                 'one of another partition is refused');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_schedules), 1, 'and nothing of it is kept');

SELECT * FROM finish();
ROLLBACK;
