-- SPEC 12: key is a dot path into the run input; its text value names the
-- bucket; a missing or JSON-null value is the bucket ''; without key the one
-- bucket ''. Buckets are fixed at submit.
BEGIN;
SELECT plan(6);

SELECT cyclone.define_limit('l', 1);
SELECT cyclone.define_limit('u', 100);
SELECT cyclone_test.limited('lw', '[{"name": "l", "key": "tenant.id"}, {"name": "u"}]');
SELECT cyclone.submit('lw', '{"tenant": {"id": "acme"}}') AS acme \gset
SELECT cyclone.submit('lw', '{"tenant": {"id": 42}}') AS num \gset
SELECT cyclone.submit('lw', '{"tenant": {"id": null}}') AS nul \gset
SELECT cyclone.submit('lw', '{"other": 1}') AS missing \gset
SELECT is((SELECT array_agg(k.bucket ORDER BY k.bucket) FROM cyclone.cyclone_buckets k WHERE k.limit_name = 'l'),
          ARRAY['', '42', 'acme'], 'buckets acme, 42 and '''' (null and missing)');
SELECT is((SELECT k.bucket FROM cyclone.cyclone_buckets k WHERE k.id = (cyclone_test.step(:'missing')).buckets[1]), '',
          'a missing key is the bucket ''''');
SELECT is((cyclone_test.step(:'nul')).buckets[1], (cyclone_test.step(:'missing')).buckets[1],
          'JSON null and missing share the bucket ''''');
SELECT is((SELECT k.bucket FROM cyclone.cyclone_buckets k WHERE k.id = (cyclone_test.step(:'acme')).buckets[2]), '',
          'a limit without key has the one bucket ''''');
SELECT is(cyclone_test.claim_count(10), 3, 'one per bucket of l: acme, 42 and ''''');
-- Redefining the workflow does not move a submitted run's steps.
SELECT cyclone.define_workflow('lw', '{"nodes": [{"name": "work"}]}');
SELECT is(cardinality((cyclone_test.step(:'missing')).buckets), 2, 'a submitted step keeps its buckets');

SELECT * FROM finish();
ROLLBACK;
