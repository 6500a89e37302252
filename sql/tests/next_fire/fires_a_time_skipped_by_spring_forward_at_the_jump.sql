-- 2026 spring-forward nights: Europe/Berlin jumps 02:00 CET -> 03:00 CEST
-- (01:00 UTC, 29 March), America/New_York 02:00 EST -> 03:00 EDT (07:00 UTC,
-- 8 March). A wall-clock time inside the skipped hour fires once, at the first
-- instant after the jump; times around it keep their own offsets.
BEGIN;
SELECT plan(11);

SELECT is(cyclone.next_fire(cron, after::timestamptz, tz), expected::timestamptz, format('%s in %s after %s: %s', cron, tz, after, why))
  FROM (VALUES
    ('30 2 * * *',   'Europe/Berlin',    '2026-03-29 00:00+00', '2026-03-29 01:00+00', '02:30 is skipped: 03:00 CEST'),
    ('0 2 * * *',    'Europe/Berlin',    '2026-03-29 00:00+00', '2026-03-29 01:00+00', '02:00 is skipped: 03:00 CEST'),
    ('30 2 * * *',   'Europe/Berlin',    '2026-03-29 01:00+00', '2026-03-30 00:30+00', 'fired at the jump: next day 02:30 CEST'),
    ('30 3 * * *',   'Europe/Berlin',    '2026-03-29 00:00+00', '2026-03-29 01:30+00', '03:30 CEST exists'),
    ('30 1 * * *',   'Europe/Berlin',    '2026-03-28 23:00+00', '2026-03-29 00:30+00', '01:30 CET exists'),
    ('*/20 * * * *', 'Europe/Berlin',    '2026-03-29 00:50+00', '2026-03-29 01:00+00', 'the skipped 02:00-02:40 fire once, at the jump'),
    ('*/20 * * * *', 'Europe/Berlin',    '2026-03-29 01:00+00', '2026-03-29 01:20+00', 'then 03:20 CEST'),
    ('30 2 * * *',   'America/New_York', '2026-03-08 05:00+00', '2026-03-08 07:00+00', '02:30 is skipped: 03:00 EDT'),
    ('30 2 * * *',   'America/New_York', '2026-03-08 07:00+00', '2026-03-09 06:30+00', 'next day 02:30 EDT'),
    ('0 3 * * *',    'America/New_York', '2026-03-08 05:00+00', '2026-03-08 07:00+00', '03:00 EDT, once'),
    ('0 3 * * *',    'America/New_York', '2026-03-08 07:00+00', '2026-03-09 07:00+00', 'the skipped 02:xx and 03:00 are one slot')
  ) AS t(cron, tz, after, expected, why);

SELECT * FROM finish();
ROLLBACK;
