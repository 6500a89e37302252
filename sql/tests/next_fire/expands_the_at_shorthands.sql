-- @yearly @annually @monthly @weekly @daily @midnight @hourly (any case).
BEGIN;
SELECT plan(8);

SELECT is(cyclone.next_fire(cron, '2026-05-13 10:20+00'), expected::timestamptz, cron)
  FROM (VALUES
    ('@yearly',   '2027-01-01 00:00+00'),
    ('@annually', '2027-01-01 00:00+00'),
    ('@monthly',  '2026-06-01 00:00+00'),
    ('@weekly',   '2026-05-17 00:00+00'),  -- the next Sunday
    ('@daily',    '2026-05-14 00:00+00'),
    ('@midnight', '2026-05-14 00:00+00'),
    ('@hourly',   '2026-05-13 11:00+00'),
    ('@HOURLY',   '2026-05-13 11:00+00')
  ) AS t(cron, expected);

SELECT * FROM finish();
ROLLBACK;
