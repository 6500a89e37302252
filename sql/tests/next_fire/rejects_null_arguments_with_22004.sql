BEGIN;
SELECT plan(3);

SELECT throws_ok($$SELECT cyclone.next_fire(NULL, '2026-01-01 00:00+00')$$, '22004', NULL, 'a NULL cron raises 22004');
SELECT throws_ok($$SELECT cyclone.next_fire('* * * * *', NULL)$$, '22004', NULL, 'a NULL p_after raises 22004');
SELECT throws_ok($$SELECT cyclone.next_fire('* * * * *', '2026-01-01 00:00+00', NULL)$$, '22004', NULL,
                 'a NULL time zone raises 22004');

SELECT * FROM finish();
ROLLBACK;
