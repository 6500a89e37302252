-- resume() applies to paused runs only.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('rn', 1) \gset
SELECT cyclone.submit('rn', '{}', '1 hour') AS run \gset
SELECT is(cyclone.resume(:'run'), false, 'resuming a running run returns false');
SELECT is((SELECT deadline_at FROM cyclone.cyclone_runs WHERE id = :'run'), cyclone.now() + interval '1 hour',
          'and does not touch its deadline');

SELECT cyclone.pause(:'run') \gset
SELECT is(cyclone.resume(:'run'), true, 'resuming the paused run returns true');
SELECT is(cyclone.resume(:'run'), false, 'a second resume returns false');

SELECT cyclone.submit('rn') AS completed_run \gset
SELECT cyclone_test.run_node(:'completed_run', 'work') \gset
SELECT is(cyclone.resume(:'completed_run'), false, 'resuming a completed run returns false');

SELECT cyclone.submit('rn') AS failed_run \gset
SELECT cyclone_test.fail_node(:'failed_run', 'work', 'permanent') \gset
SELECT is(cyclone.resume(:'failed_run'), false, 'resuming a failed run returns false');

SELECT cyclone.submit('rn') AS cancelled_run \gset
SELECT cyclone.pause(:'cancelled_run') \gset
SELECT is(cyclone.cancel(:'cancelled_run'), true, 'a paused run can be cancelled');
SELECT is(cyclone.resume(:'cancelled_run'), false, 'resuming a cancelled run returns false');

SELECT * FROM finish();
ROLLBACK;
