-- A cron that matches no day (30 February, 31 April...) is 22023, in any zone.
BEGIN;
SELECT plan(4);

SELECT throws_ok($$SELECT cyclone.next_fire('0 0 30 2 *', '2026-01-01 00:00+00')$$, '22023', NULL, '30 February never fires');
SELECT throws_ok($$SELECT cyclone.next_fire('0 0 31 4 *', '2026-01-01 00:00+00')$$, '22023', NULL, '31 April never fires');
SELECT throws_ok($$SELECT cyclone.next_fire('0 0 31 2,4,6,9,11 *', '2026-01-01 00:00+00', 'Europe/Berlin')$$, '22023', NULL,
                 'the 31st of 30-day months and February never fires');
SELECT throws_ok($$SELECT cyclone.next_fire('0 0 30 2 *', '2026-01-01 00:00+00')$$, '22023', 'next_fire: cron "0 0 30 2 *" never fires',
                 'the message says so');

SELECT * FROM finish();
ROLLBACK;
