-- The engine clock only moves forward: a negative interval raises 22023 and
-- NULL raises 22004; neither changes the clock.
BEGIN;
SELECT plan(5);

SELECT cyclone.reset_time();
SELECT cyclone.advance_time('1 hour');
SELECT throws_ok($$SELECT cyclone.advance_time('-1 second')$$, '22023', NULL, 'advance_time(-1 second) raises 22023');
SELECT throws_ok($$SELECT cyclone.advance_time('-2 hours')$$, '22023', NULL,
                 'advance_time(-2 hours) raises 22023 even though the offset is positive');
SELECT throws_ok($$SELECT cyclone.advance_time(NULL)$$, '22004', NULL, 'advance_time(NULL) raises 22004');
SELECT is(cyclone.now(), pg_catalog.now() + interval '1 hour', 'the clock did not move');
SELECT is((SELECT time_offset FROM cyclone.clock), interval '1 hour', 'the stored offset is unchanged');

SELECT * FROM finish();
ROLLBACK;
