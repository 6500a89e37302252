BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one', 3, '5 seconds') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1', '60 seconds') \gset
SELECT cyclone.advance_time('6 seconds') AS t1 \gset
SELECT is((SELECT action FROM cyclone.sweep()), 'retried', 'the step times out');

SELECT ok(NOT cyclone.complete(:step_id, 'w1', :gen, '"late"'), 'the late complete returns false');
SELECT is(cyclone.fail(:step_id, 'w1', :gen, 'late'), NULL, 'a late fail returns NULL');
SELECT ok(cyclone_test.state(:'run') = 'available' AND (cyclone_test.step(:'run')).output IS NULL,
          'the step stays available with no output');
SELECT is((cyclone_test.step(:'run')).error_kind, 'timeout', 'the timeout is still the recorded failure');

SELECT * FROM finish();
ROLLBACK;
