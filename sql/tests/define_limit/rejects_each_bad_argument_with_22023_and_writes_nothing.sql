-- SPEC 12: at least one of p_concurrency or the pair (p_rate, p_period); every
-- given value positive; p_rate and p_period together. Otherwise 22023 and
-- nothing is written (a NULL name is 22004).
BEGIN;
SELECT plan(13);

SELECT throws_ok($$SELECT cyclone.define_limit('l')$$, '22023', NULL, 'nothing given');
SELECT throws_ok($$SELECT cyclone.define_limit('l', 0)$$, '22023', NULL, 'concurrency 0');
SELECT throws_ok($$SELECT cyclone.define_limit('l', -1)$$, '22023', NULL, 'negative concurrency');
SELECT throws_ok($$SELECT cyclone.define_limit('l', NULL, 10)$$, '22023', NULL, 'a rate without a period');
SELECT throws_ok($$SELECT cyclone.define_limit('l', 5, NULL, '1 minute')$$, '22023', NULL, 'a period without a rate');
SELECT throws_ok($$SELECT cyclone.define_limit('l', NULL, 0, '1 minute')$$, '22023', NULL, 'rate 0');
SELECT throws_ok($$SELECT cyclone.define_limit('l', NULL, -3, '1 minute')$$, '22023', NULL, 'negative rate');
SELECT throws_ok($$SELECT cyclone.define_limit('l', NULL, 10, '0 seconds')$$, '22023', NULL, 'period 0');
SELECT throws_ok($$SELECT cyclone.define_limit('l', NULL, 10, '-1 minute')$$, '22023', NULL, 'negative period');
SELECT throws_ok($$SELECT cyclone.define_limit('', 1)$$, '22023', NULL, 'an empty name');
SELECT throws_ok($$SELECT cyclone.define_limit(E'a\x01b', 1)$$, '22023', NULL, 'a name with a control character');
SELECT throws_ok($$SELECT cyclone.define_limit(NULL, 1)$$, '22004', NULL, 'a NULL name is 22004');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_limits), 0, 'nothing was written');

SELECT * FROM finish();
ROLLBACK;
