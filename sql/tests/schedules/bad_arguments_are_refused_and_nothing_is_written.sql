-- SPEC 13: unknown workflow P0002; 22023 for a bad cron (naming the field), a
-- cron that never fires, an unknown time zone, an unknown overlap, a negative
-- catch-up, an input that is not a JSON object (and a bad name or deadline);
-- NULLs are 22004. Nothing is written, and a failed replace keeps the old row.
BEGIN;
SELECT plan(15);

SELECT cyclone_test.one_step('sb') \gset
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'nope')$$, 'P0002', 'workflow "nope" not found', 'unknown workflow');
SELECT throws_ok($$SELECT cyclone.schedule('s', '61 * * * *', 'sb')$$, '22023', 'cron: minute 61 is out of range (0 to 59)',
                 'a bad cron names its field');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * *', 'sb')$$, '22023', NULL, 'three fields');
SELECT throws_ok($$SELECT cyclone.schedule('s', '0 0 30 2 *', 'sb')$$, '22023', 'schedule: cron "0 0 30 2 *" never fires',
                 'a cron that never fires');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', 'Mars/Olympus')$$, '22023',
                 'schedule: time zone "Mars/Olympus" is not in pg_timezone_names', 'an unknown time zone');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', 'UTC', 'queue')$$, '22023',
                 'schedule: p_overlap must be skip, allow or cancel_other (got "queue")', 'an unknown overlap');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', 'UTC', 'skip', '-1 minute')$$, '22023',
                 NULL, 'a negative catch-up');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '[1]')$$, '22023',
                 'schedule: p_input must be a JSON object (got array)', 'an input that is not an object');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', 'UTC', 'skip', '1 hour', '0')$$, '22023',
                 NULL, 'a deadline that is not positive');
SELECT throws_ok($$SELECT cyclone.schedule('', '* * * * *', 'sb')$$, '22023', NULL, 'an empty name');
SELECT throws_ok($$SELECT cyclone.schedule(NULL, '* * * * *', 'sb')$$, '22004', NULL, 'a NULL name');
SELECT throws_ok($$SELECT cyclone.schedule('s', '* * * * *', 'sb', '{}', NULL)$$, '22004', NULL, 'a NULL time zone');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_schedules), 0, 'nothing was written');

SELECT cyclone.schedule('kept', '0 3 * * *', 'sb');
SELECT throws_ok($$SELECT cyclone.schedule('kept', '0 3 * * *', 'sb', '{}', 'UTC', 'bogus')$$, '22023', NULL,
                 'a bad replace');
SELECT is((SELECT (cron, overlap)::text FROM cyclone.cyclone_schedules), '("0 3 * * *",skip)', 'keeps the old schedule');

SELECT * FROM finish();
ROLLBACK;
