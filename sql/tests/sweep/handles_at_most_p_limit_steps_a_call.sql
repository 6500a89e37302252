BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('one') AS wf \gset
CREATE TEMP TABLE runs AS SELECT cyclone.submit_many('one', ARRAY['{}', '{}', '{}', '{}', '{}']::jsonb[]) AS id;
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 10, '1 second')), 5, 'five steps are claimed');
SELECT cyclone.advance_time('2 seconds') AS t1 \gset

SELECT is((SELECT count(*)::int FROM cyclone.sweep(0, 2)), 2, 'p_limit 2: the first sweep handles 2');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'running'), 3, '3 are still running');
SELECT is((SELECT count(*)::int FROM cyclone.sweep(0, 2)), 2, 'the second sweep handles 2 more');
SELECT is((SELECT count(*)::int FROM cyclone.sweep(0, 2)), 1, 'the third handles the last one');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'available' AND reclaims = 1), 5,
          'each step was reclaimed exactly once');
SELECT throws_ok($$SELECT * FROM cyclone.sweep(0, 0)$$, '22023', NULL, 'p_limit 0 raises 22023');
SELECT throws_ok($$SELECT * FROM cyclone.sweep(-1)$$, '22023', NULL, 'a negative p_max_reclaims raises 22023');

SELECT * FROM finish();
ROLLBACK;
