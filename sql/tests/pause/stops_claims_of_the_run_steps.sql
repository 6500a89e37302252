-- A paused run's available steps are not claimed; other runs' steps still are.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('pz') \gset
SELECT cyclone.submit('pz') AS paused_run \gset
SELECT cyclone.submit('pz') AS other_run \gset

SELECT is(cyclone.pause(:'paused_run'), true, 'pause of a running run returns true');
SELECT results_eq(
    format($$SELECT state, paused_at FROM cyclone.cyclone_runs WHERE id = %L$$, :'paused_run'),
    format($$VALUES ('paused', %L::timestamptz)$$, cyclone.now()),
    'the run is paused, paused_at is now');

SELECT results_eq($$SELECT run_id FROM cyclone.claim('w1', NULL, 10)$$, ARRAY[:'other_run'::uuid],
                  'a claim takes only the step of the running run');
SELECT is(cyclone_test.state(:'paused_run'), 'available', 'the paused run''s step stays available');
SELECT is((cyclone_test.step(:'paused_run')).attempt, 0, 'and was never attempted');

SELECT cyclone.advance_time('1 day') \gset
SELECT is_empty($$SELECT * FROM cyclone.claim('w2', ARRAY['work'], 10)$$, 'a day later it is still not claimed');
SELECT is(cyclone_test.run_state(:'paused_run'), 'paused', 'the run is still paused');

SELECT * FROM finish();
ROLLBACK;
