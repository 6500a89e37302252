-- pause() applies to running runs only: a second pause and any terminal run
-- return false and change nothing.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('pn', 1) \gset
SELECT cyclone.submit('pn') AS run \gset
SELECT is(cyclone.pause(:'run'), true, 'the first pause returns true');
SELECT (SELECT paused_at FROM cyclone.cyclone_runs WHERE id = :'run') AS first_paused_at \gset
SELECT cyclone.advance_time('1 minute') \gset
SELECT is(cyclone.pause(:'run'), false, 'pausing a paused run returns false');
SELECT is((SELECT paused_at FROM cyclone.cyclone_runs WHERE id = :'run'), :'first_paused_at'::timestamptz,
          'and keeps the original paused_at');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_audit WHERE run_id = :'run' AND action = 'pause'), 1,
          'only the effective pause is audited');

SELECT cyclone.submit('pn') AS completed_run \gset
SELECT cyclone_test.run_node(:'completed_run', 'work') \gset
SELECT is(cyclone.pause(:'completed_run'), false, 'pausing a completed run returns false');
SELECT is(cyclone_test.run_state(:'completed_run'), 'completed', 'it stays completed');

SELECT cyclone.submit('pn') AS failed_run \gset
SELECT cyclone_test.fail_node(:'failed_run', 'work', 'permanent') \gset
SELECT is(cyclone.pause(:'failed_run'), false, 'pausing a failed run returns false');

SELECT cyclone.submit('pn') AS cancelled_run \gset
SELECT cyclone.cancel(:'cancelled_run') \gset
SELECT is(cyclone.pause(:'cancelled_run'), false, 'pausing a cancelled run returns false');
SELECT is(cyclone_test.run_state(:'cancelled_run'), 'cancelled', 'it stays cancelled');

SELECT * FROM finish();
ROLLBACK;
