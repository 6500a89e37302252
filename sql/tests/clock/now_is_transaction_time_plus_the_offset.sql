-- cyclone.now() is the transaction's now() plus the offset that advance_time
-- accumulates; with no offset it is exactly now().
BEGIN;
SELECT plan(5);

SELECT cyclone.reset_time();
SELECT is(cyclone.now(), pg_catalog.now(), 'with no offset cyclone.now() = now()');
SELECT is((SELECT time_offset FROM cyclone.clock), interval '0', 'the stored offset is zero');

SELECT cyclone.advance_time('90 minutes');
SELECT is(cyclone.now(), pg_catalog.now() + interval '90 minutes', 'after advance_time(90 min): now() + 90 min');
SELECT is((SELECT time_offset FROM cyclone.clock), interval '90 minutes', 'the offset is stored (it holds across connections)');
SELECT volatility_is('cyclone', 'now', ARRAY[]::name[], 'stable', 'cyclone.now() is STABLE: constant within a statement');

SELECT * FROM finish();
ROLLBACK;
