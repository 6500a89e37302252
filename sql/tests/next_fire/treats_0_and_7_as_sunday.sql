-- Day of week 0 and 7 are both Sunday, also at the end of a range.
BEGIN;
SELECT plan(4);

SELECT is(cyclone.next_fire('0 0 * * 0', '2026-05-13 00:00+00'), '2026-05-17 00:00+00'::timestamptz, '0 is Sunday');
SELECT is(cyclone.next_fire('0 0 * * 7', '2026-05-13 00:00+00'), '2026-05-17 00:00+00'::timestamptz, '7 is Sunday');
SELECT is(cyclone.next_fire('0 0 * * 5-7', '2026-05-16 00:00+00'), '2026-05-17 00:00+00'::timestamptz,
          '5-7 is Friday to Sunday');
SELECT is(cyclone.next_fire('0 0 * * 5-7', '2026-05-17 00:00+00'), '2026-05-22 00:00+00'::timestamptz,
          '5-7 does not include Monday');

SELECT * FROM finish();
ROLLBACK;
