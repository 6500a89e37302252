-- A schedule's run that is running or paused has its row of
-- cyclone_schedule_runs open (the overlap rules read it); one closed by hand
-- is reported.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.travel_to('2030-01-07 10:30+00');
SELECT cyclone_test.one_step('job');
SELECT cyclone.schedule('hourly', '0 * * * *', 'job');
SELECT cyclone.advance_time('1 hour');
SELECT cyclone.tick();
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'the fired run is live and its row open');
UPDATE cyclone.cyclone_schedule_runs SET open = false;
SELECT results_eq($$SELECT invariant, detail ->> 'schedule' FROM cyclone.check_invariants()$$,
                  $$VALUES ('schedule_run_closed_while_live', 'hourly')$$, 'its row closed while it runs');

SELECT * FROM finish();
ROLLBACK;
