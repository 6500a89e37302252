-- A step released or reclaimed keeps its scheduled_at, which may lie below the floor: release and sweep
-- lower the floor to it, so that it is claimed in its place at once, not after the next tick.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS x \gset
SELECT cyclone.submit('one') AS y \gset
SELECT cyclone.submit('one') AS z \gset
SELECT step_id AS x_step, lease_generation AS x_gen FROM cyclone.claim('w1', NULL, 1) \gset
SELECT cyclone.advance_time('5 seconds') AS t \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT is((SELECT id FROM cyclone.cyclone_claim_floor WHERE queue_bucket = 0),
          (SELECT id FROM cyclone.cyclone_steps WHERE run_id = :'y'), 'the floor is y''s step, after x''s');

SELECT ok(cyclone.release(:x_step, 'w1', :x_gen), 'x is released');
SELECT is((SELECT run_id FROM cyclone.claim('w2', NULL, 1, interval '2 seconds')), :'x'::uuid,
          'released below the floor: claimed first, at once');

-- A tick puts the floor back above it; then its lease runs out, and a sweep (not a tick) reclaims it.
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT is((SELECT id FROM cyclone.cyclone_claim_floor WHERE queue_bucket = 0),
          (SELECT id FROM cyclone.cyclone_steps WHERE run_id = :'y'), 'x running: the floor is y''s step again');
SELECT cyclone.advance_time('3 seconds') AS t \gset
SELECT count(*) AS swept FROM cyclone.sweep() \gset
SELECT is((SELECT run_id FROM cyclone.claim('w3', NULL, 1)), :'x'::uuid,
          'reclaimed below the floor: claimed first, at once');

SELECT * FROM finish();
ROLLBACK;
