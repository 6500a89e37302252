-- Month ends, year ends and days missing from short months.
BEGIN;
SELECT plan(6);

SELECT is(cyclone.next_fire(cron, after::timestamptz), expected::timestamptz, format('%s after %s', cron, after))
  FROM (VALUES
    ('59 23 31 12 *', '2026-12-31 23:59+00', '2027-12-31 23:59+00'),
    ('0 0 * * *',     '2026-12-31 23:59+00', '2027-01-01 00:00+00'),
    ('* * * * *',     '2026-12-31 23:59+00', '2027-01-01 00:00+00'),
    ('0 0 31 * *',    '2026-03-31 00:00+00', '2026-05-31 00:00+00'),  -- April has no 31st
    ('0 0 30 * *',    '2026-01-30 00:00+00', '2026-03-30 00:00+00'),  -- nor February a 30th
    ('0 12 1 1 *',    '2026-01-01 12:00+00', '2027-01-01 12:00+00')
  ) AS t(cron, after, expected);

SELECT * FROM finish();
ROLLBACK;
