-- SPEC 14: metrics() reports every defined workflow x every non-terminal run
-- and step state (zeros included), the ready lag, dead letters by kind,
-- expired leases, the workers holding steps, and the next slot of each
-- schedule that is not paused.
BEGIN;
SELECT plan(13);

SELECT cyclone_test.travel_to('2030-01-07 10:00+00');
SELECT cyclone_test.define('ma', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]') \gset
SELECT cyclone_test.define('mw', '[{"name": "w", "kind": "wait"}]') \gset
SELECT cyclone_test.one_step('idle') \gset
-- ma: three runs with a available and b pending; one of them claimed by w1
-- with a 10 second lease, one claimed by w2 and paused, one discarded.
SELECT cyclone.submit('ma') AS doomed \gset
SELECT cyclone_test.fail_node(:'doomed', 'a', 'permanent');
SELECT cyclone.submit('ma') FROM generate_series(1, 3);
SELECT cyclone.claim('w1', NULL, 1, '10 seconds');
SELECT cyclone.advance_time('1 minute');
SELECT cyclone.claim('w2', NULL, 1, '1 hour') \gset
SELECT cyclone.pause(run_id) FROM cyclone.cyclone_steps WHERE lease_owner = 'w2';
SELECT cyclone.submit('mw');
SELECT cyclone.schedule('next', '0 3 * * *', 'idle');
SELECT cyclone.schedule('paused', '0 4 * * *', 'idle');
SELECT cyclone.pause_schedule('paused');

CREATE TEMP TABLE m AS SELECT * FROM cyclone.metrics();

SELECT results_eq($$SELECT labels ->> 'workflow', labels ->> 'state', value FROM m WHERE name = 'cyclone_runs'
                     ORDER BY 1, 2$$,
    $$VALUES ('idle', 'paused', 0::float8), ('idle', 'running', 0), ('ma', 'paused', 1), ('ma', 'running', 2),
             ('mw', 'paused', 0), ('mw', 'running', 1)$$,
    'runs by workflow and live state, zeros included; the failed run is not counted');
SELECT results_eq($$SELECT labels ->> 'workflow', labels ->> 'state', value FROM m WHERE name = 'cyclone_steps'
                     AND labels ->> 'workflow' <> 'idle' ORDER BY 1, 2$$,
    $$VALUES ('ma', 'available', 1::float8), ('ma', 'pending', 3), ('ma', 'running', 2), ('ma', 'waiting', 0),
             ('mw', 'available', 0), ('mw', 'pending', 0), ('mw', 'running', 0), ('mw', 'waiting', 1)$$,
    'steps by workflow and live state');
SELECT is((SELECT count(*)::int FROM m WHERE name = 'cyclone_steps' AND labels ->> 'workflow' = 'idle' AND value = 0), 4,
          'a workflow with no runs: four zeros');
SELECT results_eq($$SELECT labels ->> 'workflow', value FROM m WHERE name = 'cyclone_ready_lag_seconds' ORDER BY 1$$,
    $$VALUES ('idle', 0::float8), ('ma', 60), ('mw', 0)$$,
    'ready lag: the oldest due available step of a running run (submitted a minute ago)');
SELECT results_eq($$SELECT labels, value FROM m WHERE name = 'cyclone_dlq_steps'$$,
    $$VALUES ('{"workflow": "ma", "error_kind": "permanent"}'::jsonb, 1::float8)$$, 'dead letters by kind');
SELECT results_eq($$SELECT labels, value FROM m WHERE name = 'cyclone_expired_leases'$$,
    $$VALUES ('{}'::jsonb, 1::float8)$$, 'w1''s 10 second lease expired');
SELECT results_eq($$SELECT labels, value FROM m WHERE name = 'cyclone_workers'$$,
    $$VALUES ('{}'::jsonb, 2::float8)$$, 'two lease owners hold running steps');
SELECT results_eq($$SELECT labels, value FROM m WHERE name = 'cyclone_schedule_next_fire_timestamp_seconds'$$,
    $$VALUES ('{"schedule": "next"}'::jsonb, extract(epoch FROM timestamptz '2030-01-08 03:00+00')::float8)$$,
    'the next slot of each schedule, paused ones omitted');
SELECT results_eq($$SELECT labels, value FROM m WHERE name = 'cyclone_workers_alive'$$,
    $$VALUES ('{}'::jsonb, 0::float8)$$, 'no worker registered (SPEC 18): none alive, though two hold steps');
SELECT is((SELECT count(*)::int FROM m), 6 + 12 + 3 + 1 + 1 + 1 + 1 + 1, 'and nothing else');

-- Finished work leaves the live gauges.
SELECT cyclone.cancel(id) FROM cyclone.cyclone_runs WHERE state IN ('running', 'paused');
SELECT is((SELECT sum(value)::int FROM cyclone.metrics() WHERE name IN ('cyclone_runs', 'cyclone_steps')), 0,
          'all cancelled: every run and step gauge is zero');
SELECT is((SELECT value FROM cyclone.metrics() WHERE name = 'cyclone_workers'), 0::float8, 'no workers');
SELECT ok(has_function_privilege('cyclone_client', 'cyclone.metrics()', 'execute'), 'cyclone_client may call it');

SELECT * FROM finish();
ROLLBACK;
