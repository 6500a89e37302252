-- A rate's period is at most 366 days (a year however it is spelled: '1 year' counts as 360 days): a
-- longer one raises 22023 naming p_period and writes nothing. '200000 years' used to be stored, and then
-- every claim of every worker failed with a raw 22008 (now - period) while a step of the limit waited.
BEGIN;
SELECT plan(5);

SELECT throws_ok($$SELECT cyclone.define_limit('l', NULL, 10, '367 days')$$, '22023',
                 'define_limit: p_period must be at most 366 days, got 367 days', 'a period of 367 days');
SELECT throws_ok($$SELECT cyclone.define_limit('l', NULL, 10, '200000 years')$$, '22023', NULL,
                 'a period of 200,000 years');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_limits), 0, 'nothing was written');
SELECT lives_ok($$SELECT cyclone.define_limit('l', NULL, 10, '1 year')$$, 'a period of 1 year is accepted');
SELECT lives_ok($$SELECT cyclone.define_limit('l', NULL, 10, '366 days')$$, 'and one of 366 days');

SELECT * FROM finish();
ROLLBACK;
