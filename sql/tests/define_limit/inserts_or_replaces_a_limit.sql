-- define_limit inserts, and replaces on the same name; a bad redefinition keeps the old one.
BEGIN;
SELECT plan(4);

SELECT lives_ok($$SELECT cyclone.define_limit('stripe', 5)$$, 'concurrency only');
SELECT results_eq($$SELECT concurrency, rate, period FROM cyclone.cyclone_limits WHERE name = 'stripe'$$,
                  $$VALUES (5, NULL::int, NULL::interval)$$, 'stored');
SELECT cyclone.define_limit('stripe', 2, 100, '1 minute');
SELECT results_eq($$SELECT concurrency, rate, period FROM cyclone.cyclone_limits WHERE name = 'stripe'$$,
                  $$VALUES (2, 100, '1 minute'::interval)$$, 'replaced by a second call');
SELECT throws_ok($$SELECT cyclone.define_limit('stripe', 0)$$, '22023', NULL, 'a bad redefinition is refused');

SELECT * FROM finish();
ROLLBACK;
