-- drop_limit: false without such a limit; true and gone (buckets and claim
-- times with it) once nothing names or takes it.
BEGIN;
SELECT plan(5);

SELECT is(cyclone.drop_limit('nope'), false, 'no such limit: false');
SELECT cyclone.define_limit('l', 1, 10, '1 hour');
SELECT cyclone_test.limited('lw', '[{"name": "l"}]');
SELECT cyclone.submit('lw') AS run \gset
SELECT is(cyclone.complete(step_id, 'w1', lease_generation), true, 'its one step ran')
  FROM cyclone_test.claim_node(:'run');
SELECT cyclone.define_workflow('lw', '{"nodes": [{"name": "work"}]}');
SELECT is(cyclone.drop_limit('l'), true, 'no workflow names it and no unfinished step takes it: dropped');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_limits), 0, 'the limit is gone');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_buckets WHERE id <> 0), 0, 'and its buckets');

SELECT * FROM finish();
ROLLBACK;
