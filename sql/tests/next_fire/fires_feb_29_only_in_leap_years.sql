-- 0 0 29 2 * fires on leap days only, however far the next one is; with a
-- weekday too, the OR rule makes it fire on Mondays of February as well.
BEGIN;
SELECT plan(4);

SELECT is(cyclone.next_fire('0 0 29 2 *', '2026-01-01 00:00+00'), '2028-02-29 00:00+00'::timestamptz, 'next leap day from 2026');
SELECT is(cyclone.next_fire('0 0 29 2 *', '2028-02-29 00:00+00'), '2032-02-29 00:00+00'::timestamptz, 'the one after');
SELECT is(cyclone.next_fire('0 0 29 2 *', '2096-03-01 00:00+00'), '2104-02-29 00:00+00'::timestamptz,
          '2100 is not a leap year: 8 years on');
SELECT is(cyclone.next_fire('0 0 29 2 1', '2026-02-01 00:00+00'), '2026-02-02 00:00+00'::timestamptz,
          'with a weekday: the first Monday of February');

SELECT * FROM finish();
ROLLBACK;
