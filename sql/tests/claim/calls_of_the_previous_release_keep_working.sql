-- The four-argument claim of v0.2.0 is gone; a worker of that release calls
-- claim with one to four arguments, positionally, and still gets its steps.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('w', '[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"}]') AS wf \gset
SELECT cyclone.submit('w') AS run \gset

SELECT is((SELECT count(*)::int FROM cyclone.claim('one')), 1, 'claim(worker)');
SELECT is((SELECT count(*)::int FROM cyclone.claim('two', ARRAY['b'])), 1, 'claim(worker, handlers)');
SELECT is((SELECT count(*)::int FROM cyclone.claim('three', NULL, 1)), 1, 'claim(worker, handlers, limit)');
SELECT is((SELECT count(*)::int FROM cyclone.claim('four', NULL, 5, interval '1 minute')), 1,
          'claim(worker, handlers, limit, ttl)');

SELECT * FROM finish();
ROLLBACK;
