-- Issue 30 (timestamps and intervals): p_retry_in is added to cyclone.now() and stored as the step's
-- scheduled_at, so it is held to the bound of every length of time the engine schedules ahead
-- (_deadline_problem: at most 1,000,000 days): a longer one raises 22023 naming p_retry_in and writes
-- nothing (it was a raw 22008 past about 290,000 years, and a scheduled_at Python cannot load past the
-- year 9999). 1,000,000 days is accepted.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one', 5);
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset

SELECT throws_ok(format($$SELECT cyclone.fail(%s, 'w1', %s, 'boom', 'error', interval '1000000 years')$$, :step_id, :gen),
                 '22023', 'fail: p_retry_in must be at most 1000000 days (got 1000000 years)',
                 '1,000,000 years raises 22023 naming p_retry_in');
SELECT throws_ok(format($$SELECT cyclone.fail(%s, 'w1', %s, 'boom', 'error', interval '1000001 days')$$, :step_id, :gen),
                 '22023', NULL, 'just over 1,000,000 days raises 22023');
SELECT ok(cyclone_test.state(:'run') = 'running' AND (cyclone_test.step(:'run')).error IS NULL,
          'the step is still running, with no error recorded');
SELECT is(cyclone.fail(:step_id, 'w1', :gen, 'boom', 'error', interval '1000000 days'), 'available',
          '1,000,000 days is accepted');

SELECT * FROM finish();
ROLLBACK;
