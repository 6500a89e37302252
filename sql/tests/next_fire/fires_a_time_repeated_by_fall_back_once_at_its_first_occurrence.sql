-- 2026 fall-back nights: Europe/Berlin repeats 02:00-02:59 (CEST = 00:xx UTC,
-- then CET = 01:xx UTC, 25 October), America/New_York repeats 01:00-01:59
-- (EDT = 05:xx UTC, then EST = 06:xx UTC, 1 November). A repeated wall-clock
-- time fires once, at its first occurrence; the second pass fires nothing.
BEGIN;
SELECT plan(10);

SELECT is(cyclone.next_fire(cron, after::timestamptz, tz), expected::timestamptz, format('%s in %s after %s: %s', cron, tz, after, why))
  FROM (VALUES
    ('30 2 * * *',   'Europe/Berlin',    '2026-10-24 23:00+00', '2026-10-25 00:30+00', 'first 02:30 (CEST)'),
    ('30 2 * * *',   'Europe/Berlin',    '2026-10-25 00:30+00', '2026-10-26 01:30+00', 'not the second 02:30 (CET)'),
    ('30 2 * * *',   'Europe/Berlin',    '2026-10-25 01:00+00', '2026-10-26 01:30+00', 'not from inside the second pass either'),
    ('0 * * * *',    'Europe/Berlin',    '2026-10-25 00:00+00', '2026-10-25 02:00+00', 'hourly: 02:00 CET is a repeat, next 03:00 CET'),
    ('*/30 * * * *', 'Europe/Berlin',    '2026-10-25 00:40+00', '2026-10-25 02:00+00', 'every 30 min: the second 02:00 and 02:30 are repeats'),
    ('30 3 * * *',   'Europe/Berlin',    '2026-10-25 00:00+00', '2026-10-25 02:30+00', '03:30 CET'),
    ('30 1 * * *',   'America/New_York', '2026-11-01 04:00+00', '2026-11-01 05:30+00', 'first 01:30 (EDT)'),
    ('30 1 * * *',   'America/New_York', '2026-11-01 05:30+00', '2026-11-02 06:30+00', 'not the second 01:30 (EST)'),
    ('30 1 * * *',   'America/New_York', '2026-11-01 06:10+00', '2026-11-02 06:30+00', 'not from inside the second pass either'),
    ('0 2 * * *',    'America/New_York', '2026-11-01 05:30+00', '2026-11-01 07:00+00', '02:00 EST')
  ) AS t(cron, tz, after, expected, why);

SELECT * FROM finish();
ROLLBACK;
