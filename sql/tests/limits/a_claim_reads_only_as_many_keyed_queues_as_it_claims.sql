-- Claims at scale (issue 32): a claim reads the keyed queues a priority at a time, best first, in the
-- round-robin's order, and stops at as many as it asks for, so the room of the other buckets is never taken
-- (until 0.32.0 a claim took a slot of every bucket with a step waiting, then gave back the ones it did not
-- use: 300 buckets here, a claim of 290 ms with 1,000 and none that ended with 100,000). A step of a better
-- priority in the bucket served last is claimed first. The buckets '' (a limit without a key) are read
-- first, whole: their steps are in the fairness group of the steps with no keyed limit, served before keyed
-- buckets never served.
BEGIN;
SELECT plan(6);

SELECT cyclone.define_limit('tenant', 5);
SELECT cyclone_test.limited('fw', '[{"name": "tenant", "key": "t"}]');
SELECT cyclone.submit('fw', jsonb_build_object('t', 't' || i)) FROM generate_series(1, 300) i;

CREATE TEMP TABLE first_claim AS SELECT c.input ->> 't' AS t FROM cyclone.claim('w1', NULL, 2) c;
SELECT is((SELECT count(*)::int FROM first_claim), 2, 'a claim of 2 among 300 keyed buckets takes 2');
SELECT is((SELECT count(DISTINCT x.bucket_id)::int
             FROM (SELECT bucket_id FROM cyclone.cyclone_slots UNION ALL
                   SELECT bucket_id FROM cyclone.cyclone_free_slots) x), 2,
          'only the buckets of the steps it took hold slots, held or free: the other 298 were not read');

-- Several priorities: the bucket just served holds a step of a better one, and one not due yet a better
-- one still, which changes nothing.
SELECT cyclone.submit('fw', jsonb_build_object('t', (SELECT min(t) FROM first_claim)), NULL, NULL, NULL, NULL, -5);
SELECT cyclone.submit('fw', '{"t": "t300"}', NULL, NULL, cyclone.now() + interval '1 hour', NULL, -10);
SELECT is((SELECT c.input ->> 't' FROM cyclone.claim('w1', NULL, 1) c), (SELECT min(t) FROM first_claim),
          'with two priorities waiting, the better one is claimed first, from the bucket served last');

-- A limit without a key: its step is in the group of steps with no keyed limit, never served, first.
SELECT cyclone.define_limit('api', 10);
SELECT cyclone_test.limited('gw', '[{"name": "api"}]');
SELECT cyclone.submit('gw', '{"g": 1}');
SELECT is((SELECT c.input ->> 'g' FROM cyclone.claim('w1', NULL, 1) c), '1',
          'the step of a limit without a key comes before keyed buckets never served');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 10)), 10, 'a claim of 10 takes 10 of the rest');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'available' AND priority = -10), 1,
          'the step not due yet is left');

SELECT * FROM finish();
ROLLBACK;
