-- next_fire answers within the years 1 to 9999 (what Python's datetime and a slot's four-digit key hold):
-- p_after outside them, or a next fire time past 9999, raises 22023. Issue 30, finding 11: near the
-- largest timestamp it raised PostgreSQL's raw 22008; early in the year 1, west of UTC, a raw 22008 for a
-- year 0 that the calendar does not have.
BEGIN;
SELECT plan(8);

SELECT throws_ok($$SELECT cyclone.next_fire('@daily', '294276-12-31 00:00:00+00')$$, '22023',
                 'next_fire: p_after must be within the years 1 to 9999 (got 294276-12-31 00:00:00+00)',
                 'near the largest timestamp: 22023 naming p_after');
SELECT throws_ok($$SELECT cyclone.next_fire('@daily', '4713-01-01 00:00:00+00 BC')$$, '22023', NULL,
                 'the first day PostgreSQL holds');
SELECT throws_ok($$SELECT cyclone.next_fire('@daily', '10000-01-01 00:00:00+00')$$, '22023', NULL,
                 'the year 10000');
SELECT throws_ok($$SELECT cyclone.next_fire('@yearly', '9999-06-01 00:00:00+00')$$, '22023',
                 'next_fire: cron "@yearly" does not fire again before the year 10000 (after 9999-06-01 00:00:00+00)',
                 'an answer past 9999');
SELECT is(cyclone.next_fire('@daily', '9999-12-30 12:00:00+00'), '9999-12-31 00:00:00+00'::timestamptz,
          'the last day of 9999 is an answer');
SELECT is(cyclone.next_fire('@daily', '0001-01-01 00:00:00+00'), '0001-01-02 00:00:00+00'::timestamptz,
          'the first moment of the year 1 is a moment');
SELECT ok(cyclone.next_fire('@daily', '0001-01-01 00:00:00+00', 'America/New_York') > '0001-01-01 00:00:00+00',
          'west of UTC the wall clock is still in 1 BC there: no year 0 is asked for');
SELECT is(cyclone.next_fire('0 12 * * *', '0001-01-01 00:00:00+00', 'America/New_York'),
          (timestamp '0001-01-01 12:00' AT TIME ZONE 'America/New_York'), 'noon of 1 January, 1 AD, in New York');

SELECT * FROM finish();
ROLLBACK;
