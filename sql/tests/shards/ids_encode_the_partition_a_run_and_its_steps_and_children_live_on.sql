-- On a shard, every run's id encodes one of the shard's partitions, its steps'
-- ids the same one (step id mod partition count), a child run and its steps
-- are on its parent's partition, and one submit_many puts its whole batch on
-- one partition (SPEC 15).
BEGIN;
SELECT plan(8);

SELECT cyclone.configure_shard('shard-b', 8, '{5,1,3}');
SELECT is((SELECT partitions FROM cyclone.cyclone_shard), '{1,3,5}', 'the partitions held are kept in order');
SELECT cyclone_test.define('kid', '[{"name": "k"}, {"name": "l", "deps": ["k"]}]');
SELECT cyclone_test.define('parent', '[{"name": "a"}, {"name": "c", "kind": "child", "workflow": "kid", "deps": ["a"]}]');

SELECT cyclone.submit('parent') FROM generate_series(1, 60);
SELECT is((SELECT array_agg(DISTINCT cyclone.run_partition(id) ORDER BY cyclone.run_partition(id))
             FROM cyclone.cyclone_runs), '{1,3,5}', 'sixty runs land on each of the shard''s partitions, no other');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps s JOIN cyclone.cyclone_runs r ON r.id = s.run_id
            WHERE cyclone.step_partition(s.id) <> cyclone.run_partition(r.id)), 0,
          'every step''s id names its run''s partition');
SELECT is((SELECT count(DISTINCT s.id / 8)::int FROM cyclone.cyclone_steps s), (SELECT count(*)::int FROM cyclone.cyclone_steps),
          'step ids stay distinct after taking out the partition');

SELECT cyclone.complete(c.step_id, 'w1', c.lease_generation) FROM cyclone.claim('w1', NULL, 1000) c;
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE parent_run_id IS NOT NULL), 60, 'each parent started its child');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs c JOIN cyclone.cyclone_runs p ON p.id = c.parent_run_id
            WHERE cyclone.run_partition(c.id) <> cyclone.run_partition(p.id)), 0,
          'a child run lives on its parent''s partition');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps s JOIN cyclone.cyclone_runs r ON r.id = s.run_id
            WHERE r.parent_run_id IS NOT NULL AND cyclone.step_partition(s.id) <> cyclone.run_partition(r.id)), 0,
          'and so do its steps');

SELECT is((SELECT count(DISTINCT cyclone.run_partition(id))::int
             FROM cyclone.submit_many('kid', array_fill('{}'::jsonb, ARRAY[40])) AS id), 1,
          'submit_many puts its whole batch on one partition');

SELECT * FROM finish();
ROLLBACK;
