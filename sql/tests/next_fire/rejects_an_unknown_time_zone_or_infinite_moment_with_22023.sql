-- p_timezone must be a name in pg_timezone_names: abbreviations and POSIX
-- strings PostgreSQL would accept elsewhere are refused too. p_after must be finite.
BEGIN;
SELECT plan(7);

SELECT throws_ok(format('SELECT cyclone.next_fire(%L, %L, %L)', '0 0 * * *', '2026-01-01 00:00+00', tz), '22023', NULL,
                 format('time zone %L is refused', tz))
  FROM (VALUES ('Mars/Olympus'), (''), ('CEST'), ('UTC+3'), ('europe/berlin,UTC')) AS t(tz);
SELECT throws_ok($$SELECT cyclone.next_fire('0 0 * * *', 'infinity')$$, '22023', NULL, 'p_after infinity is refused');
SELECT is(cyclone.next_fire('0 0 * * *', '2026-01-01 12:00+00', 'Asia/Kolkata'), '2026-01-01 18:30+00'::timestamptz,
          'a zone from pg_timezone_names is accepted (and a half-hour offset kept)');

SELECT * FROM finish();
ROLLBACK;
