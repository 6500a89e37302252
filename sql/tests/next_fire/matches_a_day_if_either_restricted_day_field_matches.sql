-- Both day fields restricted: a day matches if either does (cron's OR rule).
-- A day field that begins with * is unrestricted, so the other one alone decides.
BEGIN;
SELECT plan(6);

SELECT is(cyclone.next_fire(cron, after::timestamptz), expected::timestamptz, format('%s after %s: %s', cron, after, why))
  FROM (VALUES
    ('0 0 13 * 5',   '2026-05-13 00:00+00', '2026-05-15 00:00+00', 'a Friday before the 13th'),
    ('0 0 13 * 5',   '2026-05-29 00:00+00', '2026-06-05 00:00+00', 'the next Friday'),
    ('0 0 1 * 1',    '2026-05-26 00:00+00', '2026-06-01 00:00+00', 'the 1st (a Monday too)'),
    ('0 0 2 * 1',    '2026-05-26 00:00+00', '2026-06-01 00:00+00', 'a Monday before the 2nd'),
    ('0 0 */1 * 5',  '2026-05-13 00:00+00', '2026-05-15 00:00+00', 'a day field starting with * is unrestricted: Fridays only'),
    ('0 0 13 * */1', '2026-05-13 00:00+00', '2026-06-13 00:00+00', 'a weekday field starting with * is unrestricted: the 13th only')
  ) AS t(cron, after, expected, why);

SELECT * FROM finish();
ROLLBACK;
