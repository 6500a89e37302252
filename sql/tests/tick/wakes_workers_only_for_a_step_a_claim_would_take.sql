-- tick() wakes idle workers when a claim would take a step (_claimable_exists):
-- a due step without limits, or one whose buckets all have room; a step held
-- back by a full bucket is no work (SPEC 5, SPEC 12).
BEGIN;
SELECT plan(5);
SET LOCAL search_path = cyclone, public;  -- internal helpers run with their caller's path

SELECT ok(NOT cyclone._claimable_exists(cyclone.now()), 'nothing submitted: no work');
SELECT cyclone.define_limit('one', 1);
SELECT cyclone_test.limited('lw', '[{"name": "one"}]');
SELECT cyclone.submit('lw') FROM generate_series(1, 2);
SELECT ok(cyclone._claimable_exists(cyclone.now()), 'a limited step with room: work');
SELECT is(cyclone_test.claim_count(10), 1, 'a claim takes one');
SELECT ok(NOT cyclone._claimable_exists(cyclone.now()), 'the other is held back by the full bucket: no work');
SELECT cyclone_test.one_step('free');
SELECT cyclone.submit('free');
SELECT ok(cyclone._claimable_exists(cyclone.now()), 'a step without limits: work');

SELECT * FROM finish();
ROLLBACK;
