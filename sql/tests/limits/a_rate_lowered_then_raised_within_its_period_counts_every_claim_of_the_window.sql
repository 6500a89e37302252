-- SPEC 12: in any window of p_period at most p_rate claims; a changed limit
-- applies to the next claim. A rate lowered below the window's claims keeps
-- them (they still count) and owes its surplus tokens (rate_debt), paid as
-- they leave the window; raised again within the period, it still counts
-- every claim of the window. (Until v0.14.0 the lowering forgot all but the
-- latest claims: three at rate 3, lowered to 1 and raised to 3, let two more
-- in at once.)
BEGIN;
SELECT plan(9);

SELECT cyclone.define_limit('burst', NULL, 3, '1 hour');
SELECT cyclone_test.limited('bw', '[{"name": "burst"}]');
SELECT cyclone.submit('bw') FROM generate_series(1, 10);
SELECT is(cyclone_test.claim_count(10), 3, 't=0: three claims fill the window');
SELECT cyclone.define_limit('burst', NULL, 1, '1 hour');
SELECT is((SELECT rate_debt FROM cyclone.cyclone_buckets WHERE limit_name = 'burst'), 2,
          'lowered to 1: the three claims stay, two tokens owed');
SELECT cyclone.define_limit('burst', NULL, 3, '1 hour');
SELECT is((SELECT rate_debt FROM cyclone.cyclone_buckets WHERE limit_name = 'burst'), 0, 'raised to 3: forgiven');
SELECT is(cyclone_test.claim_count(10), 0, 'raised again within the hour: the window still holds three claims');
SELECT cyclone.advance_time('1 hour 1 second');
SELECT is(cyclone_test.claim_count(10), 3, 'an hour later: all three left it, three more');

-- Lowered with the window full, then time passes: the debt is paid with the
-- tokens that leave it, and the new rate holds from then on.
SELECT cyclone.advance_time('10 minutes');
SELECT cyclone.define_limit('burst', NULL, 1, '1 hour');
SELECT cyclone.advance_time('49 minutes');
SELECT is(cyclone_test.claim_count(10), 0, 'lowered to 1, 59 minutes after three claims: still in the window');
SELECT is((SELECT rate_debt FROM cyclone.cyclone_buckets WHERE limit_name = 'burst'), 2, 'nothing paid yet');
SELECT cyclone.advance_time('2 minutes');
SELECT is(cyclone_test.claim_count(10), 1, 'they left: two tokens pay the debt, one claim at rate 1');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_bucket_claims c JOIN cyclone.cyclone_buckets k ON k.id = c.bucket_id
            WHERE k.limit_name = 'burst'), 1, 'one token left: the rate');

SELECT * FROM finish();
ROLLBACK;
