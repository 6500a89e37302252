-- SPEC 18: register_worker inserts a row, a refresh replaces info and moves last_seen_at (started_at kept);
-- cyclone_v_workers shows alive while seen within 60 s and the steps the worker holds; deregister_worker
-- removes the row (false when there is none).
BEGIN;
SELECT plan(12);

SELECT cyclone_test.travel_to('2030-01-07 10:00+00');
SELECT cyclone.register_worker('w1', '{"handlers": ["a"], "pid": 1}');
SELECT results_eq($$SELECT name, info, started_at, last_seen_at, alive, running FROM cyclone.cyclone_v_workers$$,
    $$VALUES ('w1', '{"handlers": ["a"], "pid": 1}'::jsonb, '2030-01-07 10:00+00'::timestamptz,
              '2030-01-07 10:00+00'::timestamptz, true, 0)$$,
    'a registered worker is listed, alive and idle');
SELECT is(current_setting('synchronous_commit'), 'off',
          'its transaction commits without waiting for the WAL flush (a lost refresh costs nothing)');

SELECT cyclone.advance_time('30 seconds');
SELECT cyclone.register_worker('w1', '{"pid": 2}');
SELECT results_eq($$SELECT info, started_at, last_seen_at FROM cyclone.cyclone_v_workers$$,
    $$VALUES ('{"pid": 2}'::jsonb, '2030-01-07 10:00+00'::timestamptz, '2030-01-07 10:00:30+00'::timestamptz)$$,
    'a refresh replaces info and moves last_seen_at; started_at stays');

SELECT cyclone.register_worker('w2');
SELECT is((SELECT info FROM cyclone.cyclone_v_workers WHERE name = 'w2'), '{}'::jsonb, 'info defaults to {}');

-- running: the steps each worker holds now.
SELECT cyclone_test.one_step('reg') \gset
SELECT cyclone.submit('reg') FROM generate_series(1, 3);
SELECT count(*) FROM cyclone.claim('w1', NULL, 2);
SELECT results_eq($$SELECT name, running FROM cyclone.cyclone_v_workers ORDER BY name$$,
    $$VALUES ('w1', 2), ('w2', 0)$$, 'running counts the steps each worker holds');

SELECT cyclone.advance_time('60 seconds');
SELECT results_eq($$SELECT name, alive FROM cyclone.cyclone_v_workers ORDER BY name$$,
    $$VALUES ('w1', false), ('w2', false)$$, 'unseen for 60 seconds: not alive');
SELECT cyclone.register_worker('w2');
SELECT is((SELECT alive FROM cyclone.cyclone_v_workers WHERE name = 'w2'), true, 'a refresh makes it alive again');

SELECT is(cyclone.deregister_worker('w2'), true, 'deregister removes the row');
SELECT is(cyclone.deregister_worker('w2'), false, 'false when there is none');
SELECT results_eq($$SELECT name FROM cyclone.cyclone_v_workers$$, $$VALUES ('w1')$$, 'only w1 is left');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE lease_owner = 'w1' AND state = 'running'), 2,
          'the registry is bookkeeping: claims do not depend on it');

-- A worker that deregistered and registers again starts anew.
SELECT cyclone.register_worker('w2');
SELECT is((SELECT started_at FROM cyclone.cyclone_v_workers WHERE name = 'w2'), cyclone.now(),
          'registering again after a deregister: started_at is now');

SELECT * FROM finish();
ROLLBACK;
