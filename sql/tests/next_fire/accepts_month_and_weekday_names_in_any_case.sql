-- JAN-DEC and SUN-SAT in any case, alone, in lists and in ranges.
BEGIN;
SELECT plan(6);

SELECT is(cyclone.next_fire(cron, after::timestamptz), expected::timestamptz, format('%s after %s', cron, after))
  FROM (VALUES
    ('0 0 1 JUN *',        '2026-01-01 00:00+00', '2026-06-01 00:00+00'),
    ('0 0 1 jan,Jul *',    '2026-02-01 00:00+00', '2026-07-01 00:00+00'),
    ('0 0 1 oct-DEC *',    '2026-02-01 00:00+00', '2026-10-01 00:00+00'),
    ('0 0 * * sun',        '2026-05-11 00:00+00', '2026-05-17 00:00+00'),
    ('0 0 * * Mon-wed',    '2026-05-14 00:00+00', '2026-05-18 00:00+00'),  -- Thursday -> Monday
    ('0 0 * * SAT,tue',    '2026-05-12 00:00+00', '2026-05-16 00:00+00')
  ) AS t(cron, after, expected);

SELECT * FROM finish();
ROLLBACK;
