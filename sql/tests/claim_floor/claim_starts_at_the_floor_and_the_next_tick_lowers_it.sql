-- claim walks queue 0 from the floor tick keeps: while steps past it are due, a step that became available
-- below it without lowering it (here a run submitted with a p_run_at an hour ago) waits for the next tick,
-- which lowers the floor to it, and is then claimed first. A floor older than 10 seconds (no tick) is not
-- used.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS b1 \gset
SELECT cyclone.submit('one') AS b2 \gset
SELECT cyclone.submit('one') AS b3 \gset
SELECT cyclone.advance_time('5 seconds') AS t \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, cyclone.now() - interval '1 hour') AS past \gset

SELECT is((SELECT run_id FROM cyclone.claim('w1', NULL, 1)), :'b1'::uuid,
          'the step below the floor is not read: claim starts at the floor');
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT is((SELECT run_id FROM cyclone.claim('w1', NULL, 1)), :'past'::uuid,
          'the next tick lowers the floor to it, and it is claimed first');

-- A floor that no tick refreshed for over 10 seconds is not used.
SELECT cyclone.submit('one', '{}', NULL, NULL, cyclone.now() - interval '2 hours') AS older \gset
SELECT is((SELECT run_id FROM cyclone.claim('w1', NULL, 1)), :'b2'::uuid, 'a fresh floor still hides it');
SELECT cyclone.advance_time('11 seconds') AS t \gset
SELECT is((SELECT run_id FROM cyclone.claim('w1', NULL, 1)), :'older'::uuid,
          'a floor older than 10 seconds is not used: claim walks from the front');

SELECT * FROM finish();
ROLLBACK;
