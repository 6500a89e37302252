-- pg_cron is optional: with the extension absent from this database,
-- schedule_tick() raises 55000 and unschedule_tick() returns false.
BEGIN;
SELECT plan(3);

SELECT is((SELECT count(*)::int FROM pg_extension WHERE extname = 'pg_cron'), 0,
          'pg_cron is not installed in this database');
SELECT throws_ok($$SELECT cyclone.schedule_tick()$$, '55000', NULL,
                 'schedule_tick without pg_cron raises 55000');
SELECT is(cyclone.unschedule_tick(), false, 'unschedule_tick without pg_cron returns false');

SELECT * FROM finish();
ROLLBACK;
