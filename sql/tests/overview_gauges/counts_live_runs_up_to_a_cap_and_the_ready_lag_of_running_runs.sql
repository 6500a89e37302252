-- overview_gauges counts each workflow's running and paused runs among its first p_cap live ones and
-- says when there are more (cyclone_runs_capped); its ready steps, and the lag of the oldest due one of a
-- run that is not paused; its dead letters by kind; and the expired leases. A finished run is not counted.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone_test.one_step('idle', 1) \gset
SELECT cyclone_test.travel_to('2030-01-07 10:00+00') \gset
SELECT cyclone.submit('solo') AS oldest \gset
SELECT cyclone.pause(:'oldest') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:01+00') \gset
SELECT cyclone.submit('solo') AS done \gset
SELECT cyclone.submit('solo') AS dead \gset
SELECT cyclone.submit('solo') AS third \gset
-- Claimed at 10:01 (claim takes the steps of running runs, oldest first), then ended or left running.
CREATE TEMP TABLE claimed AS SELECT * FROM cyclone.claim('w1', ARRAY['work'], 10, interval '30 seconds');
SELECT cyclone.complete(step_id, 'w1', lease_generation, '{}') FROM claimed WHERE run_id = :'done';
SELECT cyclone.fail(step_id, 'w1', lease_generation, 'boom', 'timeout') FROM claimed WHERE run_id = :'dead';
SELECT cyclone.submit('solo') AS second \gset
SELECT cyclone_test.travel_to('2030-01-07 10:05+00') \gset

CREATE TEMP TABLE g AS SELECT * FROM cyclone.overview_gauges(10);
SELECT is((SELECT value FROM g WHERE name = 'cyclone_runs' AND labels = '{"workflow": "solo", "state": "running"}'),
          2::float8, 'two running runs');
SELECT is((SELECT value FROM g WHERE name = 'cyclone_runs' AND labels = '{"workflow": "solo", "state": "paused"}'),
          1::float8, 'one paused');
SELECT is((SELECT value FROM g WHERE name = 'cyclone_runs' AND labels = '{"workflow": "idle", "state": "running"}'),
          0::float8, 'a workflow without runs has zeros');
SELECT is((SELECT count(*) FROM g WHERE name = 'cyclone_runs_capped'), 0::bigint, 'under the cap: exact');
SELECT is((SELECT value FROM g WHERE name = 'cyclone_steps' AND labels = '{"workflow": "solo", "state": "available"}'),
          2::float8, 'the ready steps: the paused run''s and the second''s');
SELECT is((SELECT value FROM g WHERE name = 'cyclone_ready_lag_seconds' AND labels = '{"workflow": "solo"}'),
          240::float8, 'the lag is the second run''s step''s, due at 10:01: the paused run''s older one is passed over');
SELECT is((SELECT value FROM g WHERE name = 'cyclone_dlq_steps'
              AND labels = '{"workflow": "solo", "error_kind": "timeout"}'), 1::float8, 'the dead letter, by kind');
SELECT is((SELECT value FROM g WHERE name = 'cyclone_expired_leases'), 1::float8,
          'the third''s step, claimed at 10:01 for 30 seconds, is past its lease');

SELECT results_eq(
    $$SELECT name, labels, value FROM cyclone.overview_gauges(2) WHERE name IN ('cyclone_runs', 'cyclone_runs_capped')
       AND labels ->> 'workflow' = 'solo' ORDER BY name, labels ->> 'state'$$,
    $$VALUES ('cyclone_runs', '{"workflow": "solo", "state": "paused"}'::jsonb, 1::float8),
             ('cyclone_runs', '{"workflow": "solo", "state": "running"}'::jsonb, 1::float8),
             ('cyclone_runs_capped', '{"workflow": "solo"}'::jsonb, 1::float8)$$,
    'with a cap of 2: the oldest two counted (the paused one and the next), and capped');

SELECT * FROM finish();
ROLLBACK;
