-- The first fire time strictly after p_after: a fire time equal to p_after is
-- not returned, one a microsecond later is; seconds of p_after are not rounded.
BEGIN;
SELECT plan(5);

SELECT is(cyclone.next_fire('30 12 * * *', '2026-05-13 12:30+00'), '2026-05-14 12:30+00'::timestamptz,
          'a fire time equal to p_after is not returned');
SELECT is(cyclone.next_fire('30 12 * * *', '2026-05-13 12:29:59.999999+00'), '2026-05-13 12:30+00'::timestamptz,
          'a fire time a microsecond after p_after is returned');
SELECT is(cyclone.next_fire('30 12 * * *', '2026-05-13 12:30:00.000001+00'), '2026-05-14 12:30+00'::timestamptz,
          'a fire time a microsecond before p_after is not returned');
SELECT is(cyclone.next_fire('* * * * *', '2026-05-13 12:30:30+00'), '2026-05-13 12:31+00'::timestamptz,
          'every minute: the next whole minute');
SELECT is(cyclone.next_fire('0 0 * * *', '2026-05-13 23:00+00', 'Asia/Tokyo'), '2026-05-14 15:00+00'::timestamptz,
          'p_after is compared as an instant, whatever the zone (08:00 in Tokyo -> next midnight there)');

SELECT * FROM finish();
ROLLBACK;
