-- Run ids are laid out as UUID version 7 (41_shards.sql, _new_run_id): the
-- engine clock's milliseconds since 1970 in their first 48 bits, so a run made
-- later has a greater id and goes to the right-hand edge of every index that
-- starts with a run id; the rest is random, so ids made at the same
-- millisecond differ. On a shard, the last 16 bits are still the partition.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('job');
SELECT cyclone_test.travel_to('2030-01-07 10:00:00.123+00');
SELECT cyclone.submit('job') AS first \gset
SELECT is(substr(:'first', 1, 13), '01b8fbd1-2d7b', 'the first 48 bits are the engine clock in milliseconds since 1970');
SELECT is(substr(:'first', 15, 1), '7', 'the version is 7');
SELECT ok(substr(:'first', 20, 1) IN ('8', '9', 'a', 'b'), 'the variant is RFC 9562''s');
SELECT cyclone_test.travel_to('2030-01-07 10:00:00.124+00');
SELECT cyclone.submit('job') AS second \gset
SELECT ok(:'second'::uuid > :'first'::uuid, 'a run made a millisecond later has a greater id');
SELECT is((SELECT count(DISTINCT id)::int FROM cyclone.submit_many('job', array_fill('{}'::jsonb, ARRAY[1000])) AS id),
          1000, 'a thousand ids made at the same millisecond are distinct');

SELECT cyclone._run_id_on(5, cyclone.now())::text AS sharded \gset
SELECT is(cyclone._id_partition(:'sharded', 8), 5, 'a shard''s id names its partition in its last 16 bits');
SELECT is(substr(:'sharded', 1, 15), '01b8fbd1-2d7c-7', 'and starts with the time and the version all the same');

SELECT * FROM finish();
ROLLBACK;
