-- SPEC 16: progress(p_step_id, p_worker, p_lease_generation, p_progress), the compare-and-set of complete,
-- keeps the latest progress and progress_at on the step (views show both) and sends NOTIFY cyclone_progress
-- with payload {"run_id": ..., "step_id": ...}; false when the lease is not the caller's.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('one') AS run \gset
SELECT step_id AS s, lease_generation AS g FROM cyclone_test.claim_node(:'run', 'work', 'w1') \gset

SELECT is(cyclone.progress(:s, 'w2', :g, '0.5'), false, 'another worker: false');
SELECT is(cyclone.progress(:s, 'w1', :g + 1, '0.5'), false, 'a stale generation: false');
SELECT is((cyclone_test.step(:'run')).progress, NULL, 'those kept nothing');

SELECT is(cyclone.progress(:s, 'w1', :g, '{"done": 1, "total": 4}'), true, 'the owner reports');
SELECT cyclone.advance_time('2 seconds');
SELECT is(cyclone.progress(:s, 'w1', :g, '{"done": 2, "total": 4}'), true, 'and again');
SELECT is((SELECT progress FROM cyclone.cyclone_v_steps WHERE id = :s), '{"done": 2, "total": 4}'::jsonb,
          'the latest value is kept');
SELECT is((SELECT progress_at FROM cyclone.cyclone_v_steps WHERE id = :s), cyclone.now(), 'with its time');
SELECT is(cyclone_test.state(:'run'), 'running', 'the step keeps running');

-- The notification is queued with the transaction; a listener in this session sees nothing before commit,
-- so the payload is read from the function's body instead of pg_notification_queue_usage.
SELECT ok(pg_get_functiondef('cyclone.progress(bigint,text,bigint,jsonb)'::regprocedure)
          ~ $re$pg_notify\('cyclone_progress', json_build_object\('run_id', v_run_id, 'step_id', p_step_id\)$re$,
          'it notifies cyclone_progress with the run and the step');

SELECT cyclone.complete(:s, 'w1', :g, '{}');
SELECT is((cyclone_test.step(:'run')).progress, '{"done": 2, "total": 4}'::jsonb, 'the value stays after the end');

SELECT * FROM finish();
ROLLBACK;
