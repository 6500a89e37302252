-- A cron with the wrong number of fields, a value out of range, a bad step or
-- range, or an unknown name or shorthand is 22023.
BEGIN;
SELECT plan(22);

SELECT throws_ok(format('SELECT cyclone.next_fire(%L, %L)', cron, '2026-01-01 00:00+00'), '22023', NULL,
                 format('%L is refused (%s)', cron, why))
  FROM (VALUES
    ('',                 'empty'),
    ('* * * *',          'four fields'),
    ('* * * * * *',      'six fields'),
    ('60 * * * *',       'minute 60'),
    ('* 24 * * *',       'hour 24'),
    ('* * 0 * *',        'day 0'),
    ('* * 32 * *',       'day 32'),
    ('* * * 0 *',        'month 0'),
    ('* * * 13 *',       'month 13'),
    ('* * * * 8',        'weekday 8'),
    ('*/0 * * * *',      'step 0'),
    ('*/61 * * * *',     'step larger than the field'),
    ('1/ * * * *',       'empty step'),
    ('1/2/3 * * * *',    'two steps'),
    ('30-10 * * * *',    'backwards range'),
    ('1-2-3 * * * *',    'two dashes'),
    ('*-5 * * * *',      'star range'),
    ('1,,2 * * * *',     'empty list element'),
    ('* * * FOO *',      'unknown month name'),
    ('* * * * MONDAY',   'unknown weekday name'),
    ('* * * * JAN',      'a month name in the weekday field'),
    ('@every_minute',    'unknown shorthand')
  ) AS t(cron, why);

SELECT * FROM finish();
ROLLBACK;
