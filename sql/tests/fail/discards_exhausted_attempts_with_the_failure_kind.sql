-- With max_attempts 2, the second failed execution is discarded with the kind of
-- that failure: error, panic and timeout alike.
BEGIN;
SELECT plan(12);

-- One handler per run, so that each claim takes exactly that run's step.
SELECT cyclone_test.define('two_error', '[{"name":"work","handler":"h_error"}]', 2) AS wf1 \gset
SELECT cyclone_test.define('two_panic', '[{"name":"work","handler":"h_panic"}]', 2) AS wf2 \gset
SELECT cyclone_test.define('two_timeout', '[{"name":"work","handler":"h_timeout"}]', 2) AS wf3 \gset
SELECT cyclone.submit('two_error') AS r_error \gset
SELECT cyclone.submit('two_panic') AS r_panic \gset
SELECT cyclone.submit('two_timeout') AS r_timeout \gset

SELECT is(cyclone_test.fail_node(:'r_error', 'work', 'error', '0 seconds'), 'available', 'error: attempt 1 of 2 is retried');
SELECT is(cyclone_test.fail_node(:'r_error', 'work', 'error', '0 seconds'), 'discarded', 'error: attempt 2 of 2 is discarded');
SELECT is(ARRAY[(cyclone_test.step(:'r_error')).error_kind, (cyclone_test.step(:'r_error')).attempt::text],
          ARRAY['error', '2'], 'error: discarded as error at attempt 2');

SELECT is(cyclone_test.fail_node(:'r_panic', 'work', 'panic', '0 seconds'), 'available', 'panic: attempt 1 of 2 is retried');
SELECT is(cyclone_test.fail_node(:'r_panic', 'work', 'panic', '0 seconds'), 'discarded', 'panic: attempt 2 of 2 is discarded');
SELECT is(ARRAY[(cyclone_test.step(:'r_panic')).error_kind, (cyclone_test.step(:'r_panic')).attempt::text],
          ARRAY['panic', '2'], 'panic: discarded as panic at attempt 2');

SELECT is(cyclone_test.fail_node(:'r_timeout', 'work', 'timeout', '0 seconds'), 'available', 'timeout: attempt 1 of 2 is retried');
SELECT is(cyclone_test.fail_node(:'r_timeout', 'work', 'timeout', '0 seconds'), 'discarded', 'timeout: attempt 2 of 2 is discarded');
SELECT is(ARRAY[(cyclone_test.step(:'r_timeout')).error_kind, (cyclone_test.step(:'r_timeout')).attempt::text],
          ARRAY['timeout', '2'], 'timeout: discarded as timeout at attempt 2');

SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id IN (:'r_error', :'r_panic', :'r_timeout')
                                                              AND state = 'discarded' AND error = 'boom'), 3,
          'each discarded step keeps the last error text');
SELECT is_empty($$SELECT * FROM cyclone.claim('w1', NULL, 10)$$, 'nothing is claimable any more');
SELECT is(ARRAY[cyclone_test.run_state(:'r_error'), cyclone_test.run_state(:'r_panic'), cyclone_test.run_state(:'r_timeout')],
          ARRAY['failed', 'failed', 'failed'], 'the three runs failed');

SELECT * FROM finish();
ROLLBACK;
