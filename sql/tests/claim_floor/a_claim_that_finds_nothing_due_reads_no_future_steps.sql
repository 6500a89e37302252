-- The floor's priority is read with its priority as one value, so the scan of the claim index ends at the
-- first step not yet due: 5,000 steps waiting for tomorrow add no more than a few pages to what a claim that
-- finds nothing due reads (before, it read every one of their entries, twice). Measured as the difference
-- with the same claim before they were submitted, so that what other tests left in the index (their
-- rolled-back steps' entries, until a vacuum) counts on both sides.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.advance_time('5 seconds') AS t \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT pg_stat_get_xact_blocks_fetched('cyclone.cyclone_steps_claimable'::regclass) AS b0 \gset
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 10)), 0, 'nothing waits');
SELECT pg_stat_get_xact_blocks_fetched('cyclone.cyclone_steps_claimable'::regclass) - :b0 AS empty \gset

SELECT count(*) FROM (SELECT cyclone.submit('one', '{}', NULL, NULL, cyclone.now() + interval '1 day')
                        FROM generate_series(1, 5000)) f \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT pg_stat_get_xact_blocks_fetched('cyclone.cyclone_steps_claimable'::regclass) AS b1 \gset
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 10)), 0, 'nothing is due');
-- At most 12: the 5,000 entries fill some 25 leaf pages, which a scan that read them would fetch twice; a
-- few pages more or less than the empty claim come from what earlier files left in the index (4 was
-- exceeded once in four runs of a group of files).
SELECT cmp_ok(pg_stat_get_xact_blocks_fetched('cyclone.cyclone_steps_claimable'::regclass) - :b1 - :empty,
              '<=', 12::bigint,
              'the 5,000 later steps add a few pages of the claim index to the claim, not their entries');

SELECT * FROM finish();
ROLLBACK;
