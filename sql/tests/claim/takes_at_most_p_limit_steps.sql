BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one') AS wf \gset
CREATE TEMP TABLE runs AS SELECT cyclone.submit_many('one', ARRAY['{}', '{}', '{}', '{}', '{}']::jsonb[]) AS id;

SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 3)), 3, 'p_limit 3 claims 3 of 5');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'running'), 3, '3 steps are running');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1')), 1, 'the default p_limit is 1');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 100)), 1, 'a larger limit takes what is left');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'available'), 0, 'nothing is left');

SELECT * FROM finish();
ROLLBACK;
