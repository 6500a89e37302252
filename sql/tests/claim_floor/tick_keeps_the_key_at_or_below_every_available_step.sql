-- tick keeps claim's floor (cyclone_claim_floor) at queue 0's first available step in claim order when that
-- step is over a second old, else at now - 1 second with the lowest id, and makes the row again when it is
-- missing (the table is unlogged: empty after a crash).
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS a \gset
SELECT cyclone.submit('one') AS b \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset

SELECT is((SELECT (f.priority, f.scheduled_at, f.id, f.set_at)::text FROM cyclone.cyclone_claim_floor f WHERE f.queue_bucket = 0),
          (0, cyclone.now() - interval '1 second', -9223372036854775808, cyclone.now())::text,
          'steps due less than a second ago: the floor is now - 1 second, below them');

SELECT cyclone.advance_time('5 seconds') AS t \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT is((SELECT (f.priority, f.scheduled_at, f.id)::text FROM cyclone.cyclone_claim_floor f WHERE f.queue_bucket = 0),
          (SELECT (s.priority, s.scheduled_at, s.id)::text FROM cyclone.cyclone_steps s WHERE s.run_id = :'a'),
          'older steps: the floor is the first available step''s key');

SELECT count(*) AS n FROM cyclone.claim('w1', NULL, 2) \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT is((SELECT (f.priority, f.scheduled_at, f.id)::text FROM cyclone.cyclone_claim_floor f WHERE f.queue_bucket = 0),
          (0, cyclone.now() - interval '1 second', -9223372036854775808)::text,
          'none available: now - 1 second, at the last floor''s priority');

DELETE FROM cyclone.cyclone_claim_floor;
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT is((SELECT count(*) FROM cyclone.cyclone_claim_floor WHERE queue_bucket = 0), 1::bigint,
          'a missing row is made again');

SELECT * FROM finish();
ROLLBACK;
