-- Without a shard configuration a database is the one-shard case: partition
-- 0 for everything, and step ids straight from their sequence (SPEC 15).
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('two', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]');
SELECT cyclone.submit('two') AS run \gset
SELECT is((SELECT max(id) - min(id) FROM cyclone.cyclone_steps WHERE run_id = :'run'), 1::bigint,
          'a run''s two steps take consecutive ids');
SELECT is(cyclone.run_partition(:'run'), 0, 'its run is on partition 0');
SELECT is((SELECT array_agg(DISTINCT cyclone.step_partition(id)) FROM cyclone.cyclone_steps), '{0}', 'and its steps');
SELECT is(cyclone.key_partition('two', 'any key'), 0, 'and every idempotency key');

SELECT * FROM finish();
ROLLBACK;
