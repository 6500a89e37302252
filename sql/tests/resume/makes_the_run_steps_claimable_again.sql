-- After resume the run's due steps are claimed again.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('rc') \gset
SELECT cyclone.submit('rc') AS run \gset
SELECT cyclone.pause(:'run') \gset
SELECT is_empty($$SELECT * FROM cyclone.claim('w1')$$, 'nothing claimable while paused');
SELECT is(cyclone.resume(:'run'), true, 'resume returns true');
SELECT results_eq($$SELECT run_id, node, attempt FROM cyclone.claim('w1')$$,
                  format($$VALUES (%L::uuid, 'work', 1)$$, :'run'),
                  'the step is claimed, attempt 1');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_audit WHERE run_id = :'run' AND action IN ('pause', 'resume')), 2,
          'pause and resume are both audited');

SELECT * FROM finish();
ROLLBACK;
