-- SPEC 14: the ready lag is the age of the oldest due available step of a
-- running run: a paused run's available step, however old, does not count.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.travel_to('2030-01-07 10:00+00');
SELECT cyclone_test.one_step('lag');
SELECT cyclone.submit('lag') AS old \gset
SELECT cyclone.pause(:'old');
SELECT cyclone.advance_time('1 hour');
SELECT cyclone.submit('lag') AS young \gset
SELECT cyclone.advance_time('30 seconds');

SELECT is(cyclone_test.state(:'old'), 'available', 'the paused run''s step is still available');
SELECT is((SELECT value FROM cyclone.metrics() WHERE name = 'cyclone_ready_lag_seconds'
            AND labels ->> 'workflow' = 'lag'), 30::float8, 'the lag is the running run''s: 30 s, not an hour');
SELECT cyclone.resume(:'old');
SELECT is((SELECT value FROM cyclone.metrics() WHERE name = 'cyclone_ready_lag_seconds'
            AND labels ->> 'workflow' = 'lag'), 3630::float8, 'resumed, its step counts again');

SELECT * FROM finish();
ROLLBACK;
