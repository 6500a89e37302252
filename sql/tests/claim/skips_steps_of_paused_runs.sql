BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS paused \gset
SELECT cyclone.submit('one') AS live \gset
SELECT cyclone.pause(:'paused') AS p \gset

SELECT results_eq($$SELECT run_id FROM cyclone.claim('w1', NULL, 10)$$,
                  format($$VALUES (%L::uuid)$$, :'live'),
                  'only the step of the running run is claimed');
SELECT is(cyclone_test.state(:'paused'), 'available', 'the paused run''s step stays available');
SELECT is((cyclone_test.step(:'paused')).attempt, 0, 'and has not been charged an attempt');
SELECT ok(cyclone.resume(:'paused'), 'resume the run');
SELECT results_eq($$SELECT run_id, attempt FROM cyclone.claim('w1', NULL, 10)$$,
                  format($$VALUES (%L::uuid, 1)$$, :'paused'),
                  'once resumed its step is claimed as attempt 1');

SELECT * FROM finish();
ROLLBACK;
