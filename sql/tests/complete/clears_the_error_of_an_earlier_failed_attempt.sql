-- error/error_kind describe the last failure while a step is being retried;
-- once it completes they are cleared, so that error_kind queries select only
-- steps that ended in failure.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('flaky');
SELECT cyclone.submit('flaky') AS run_id \gset
SELECT is(cyclone_test.fail_node(:'run_id', 'work', 'error', interval '0'), 'available', 'the first attempt fails');
SELECT is((cyclone_test.step(:'run_id')).error_kind, 'error', 'the retrying step shows the last failure');
SELECT ok(cyclone_test.run_node(:'run_id', 'work'), 'the second attempt completes');
SELECT is((SELECT row(s.error, s.error_kind)::text FROM cyclone.cyclone_v_steps s WHERE s.run_id = :'run_id'),
          row(NULL::text, NULL::text)::text, 'error and error_kind are cleared on completion');

SELECT * FROM finish();
ROLLBACK;
