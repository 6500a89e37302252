-- SPEC 12: changing a limit applies to the next claim. A rate lowered below
-- the claims in the window allows the next claim once enough of the latest
-- ones have left it: the window is the same sliding window, with the new rate.
BEGIN;
SELECT plan(5);

SELECT cyclone.define_limit('r', NULL, 3, '1 hour');
SELECT cyclone_test.limited('rw', '[{"name": "r"}]');
SELECT cyclone.submit('rw') FROM generate_series(1, 10);
SELECT is(cyclone_test.claim_count(1), 1, 't=0: a claim');
SELECT cyclone.advance_time('10 minutes');
SELECT is(cyclone_test.claim_count(1), 1, 't=10m: a claim');
SELECT cyclone.advance_time('10 minutes');
SELECT is(cyclone_test.claim_count(1), 1, 't=20m: a claim (3 in the window)');
SELECT cyclone.define_limit('r', NULL, 2, '1 hour');
SELECT cyclone.advance_time('45 minutes');
SELECT is(cyclone_test.claim_count(10), 0, 'rate lowered to 2, t=65m: the claims of 10m and 20m fill it');
SELECT cyclone.advance_time('5 minutes');
SELECT is(cyclone_test.claim_count(10), 1, 't=70m: the claim of 10m left the window: one claim');

SELECT * FROM finish();
ROLLBACK;
