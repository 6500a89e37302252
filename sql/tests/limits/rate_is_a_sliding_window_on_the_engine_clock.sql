-- SPEC 12: in any window of length p_period on the engine clock, at most p_rate
-- claims take a slot of one bucket: a sliding window, not a fixed one.
BEGIN;
SELECT plan(7);

SELECT cyclone.define_limit('r', NULL, 3, '1 minute');
SELECT cyclone_test.limited('rw', '[{"name": "r"}]');
SELECT cyclone.submit('rw') FROM generate_series(1, 10);
SELECT is(cyclone_test.claim_count(2), 2, 't=0: 2 claims');
SELECT cyclone.advance_time('40 seconds');
SELECT is(cyclone_test.claim_count(10), 1, 't=40s: 1 more (3 in the window)');
SELECT cyclone.advance_time('19 seconds');
SELECT is(cyclone_test.claim_count(10), 0, 't=59s: none, the first two are still in the window');
SELECT cyclone.advance_time('1 second');
SELECT is(cyclone_test.claim_count(10), 2, 't=60s: the two claims of t=0 left the window: 2 more');
SELECT cyclone.advance_time('39 seconds');
SELECT is(cyclone_test.claim_count(10), 0, 't=99s: none (a fixed window would have reset at t=60)');
SELECT cyclone.advance_time('1 second');
SELECT is(cyclone_test.claim_count(10), 1, 't=100s: the claim of t=40s left: 1 more');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'running'), 6,
          'completions do not matter to a rate: 6 running');

SELECT * FROM finish();
ROLLBACK;
