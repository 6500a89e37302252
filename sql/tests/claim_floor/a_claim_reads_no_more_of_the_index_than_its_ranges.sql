-- Each range claim reads of queue 0 ends its index scan at its last priority: with the floor in the only
-- priority there is, the range of the priorities above it finds nothing at once, and a claim of one step
-- reads a few pages of the claim index however many steps wait (before, that range read the whole queue:
-- an index scan ends at a row comparison only where its first member decides it).
BEGIN;
SELECT plan(2);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT count(*) FROM cyclone.submit_many('one', array_fill('{}'::jsonb, ARRAY[5000])) \gset
SELECT cyclone.advance_time('5 seconds') AS t \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT ok(EXISTS (SELECT 1 FROM cyclone.cyclone_claim_floor), 'tick set the floor');

SELECT pg_stat_get_xact_blocks_fetched('cyclone.cyclone_steps_claimable'::regclass) AS before \gset
SELECT count(*) FROM cyclone.claim('w1', NULL, 1) \gset
SELECT cmp_ok(pg_stat_get_xact_blocks_fetched('cyclone.cyclone_steps_claimable'::regclass) - :before, '<=', 8::bigint,
              'a claim of one reads a few pages of the claim index, not the 5,000 waiting steps'' entries');

SELECT * FROM finish();
ROLLBACK;
