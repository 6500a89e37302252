-- At the deadline every available, running and waiting step is dead-lettered
-- with error_kind 'deadline' and error exactly 'run deadline exceeded'.
BEGIN;
SELECT plan(13);

SELECT cyclone_test.define('dl3', '[{"name": "idle"}, {"name": "busy"},
                                    {"name": "parked", "kind": "wait", "signal": "go"}]') \gset
SELECT cyclone.submit('dl3', '{}', '1 hour') AS run \gset
SELECT step_id AS busy_id, lease_generation AS busy_gen FROM cyclone_test.claim_node(:'run', 'busy') \gset

SELECT is(cyclone_test.state(:'run', 'idle'), 'available', 'idle starts available');
SELECT is(cyclone_test.state(:'run', 'busy'), 'running', 'busy is running');
SELECT is(cyclone_test.state(:'run', 'parked'), 'waiting', 'parked is waiting on its signal');

SELECT cyclone.advance_time('1 hour 1 second') \gset
SELECT results_eq($$SELECT cyclone.enforce_deadlines()$$, ARRAY[:'run'::uuid], 'the run is failed by its deadline');

SELECT results_eq(
    format($$SELECT node, state, error_kind, error, completed_at FROM cyclone.cyclone_v_steps
              WHERE run_id = %L ORDER BY node$$, :'run'),
    format($$VALUES ('busy', 'discarded', 'deadline', 'run deadline exceeded', %L::timestamptz),
                    ('idle', 'discarded', 'deadline', 'run deadline exceeded', %L::timestamptz),
                    ('parked', 'discarded', 'deadline', 'run deadline exceeded', %L::timestamptz)$$,
           cyclone.now(), cyclone.now(), cyclone.now()),
    'available, running and waiting steps are discarded as deadline at the current time');

SELECT is((cyclone_test.step(:'run', 'busy')).lease_owner, NULL, 'the running step lost its lease owner');
SELECT is((cyclone_test.step(:'run', 'busy')).lease_expiry, NULL, 'the running step lost its lease expiry');
SELECT is((cyclone_test.step(:'run', 'busy')).attempt, 1, 'the running step keeps attempt 1');
SELECT is(cyclone.renew(:busy_id, 'w1', :busy_gen), false, 'renew of the running handler now returns false');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_dlq WHERE run_id = :'run' AND error_kind = 'deadline'), 3,
          'all three steps are in the dead-letter queue with kind deadline');
SELECT is((SELECT workflow FROM cyclone.cyclone_v_dlq WHERE run_id = :'run' AND node = 'parked'), 'dl3',
          'the dead-letter view carries the workflow');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run is failed');
SELECT is(cyclone.signal(:'run', 'go'), false, 'a signal for the discarded wait node is refused');

SELECT * FROM finish();
ROLLBACK;
