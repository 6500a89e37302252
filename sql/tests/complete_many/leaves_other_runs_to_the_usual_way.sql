-- What _complete_solo_runs leaves to complete_many's usual way (the run stays live, queued for archive()),
-- each in a batch of 64 filled with runs of one step: a day without history tables yet, a step holding
-- limit slots, a child run; a stale generation moves nothing. A run awaited by another ends its await node
-- either way.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone_test.travel_to('2031-06-01 12:00+00') \gset
-- Claims every available step and completes them in one batch (the fillers make it 64 or more).
CREATE FUNCTION pg_temp.finish_all(p_worker text DEFAULT 'w1') RETURNS SETOF boolean LANGUAGE sql AS $$
    WITH c AS (SELECT * FROM cyclone.claim(p_worker, NULL, 200))
    SELECT m.accepted FROM cyclone.complete_many(p_worker, (SELECT array_agg(step_id) FROM c),
                                                 (SELECT array_agg(lease_generation) FROM c),
                                                 (SELECT array_agg('{}'::jsonb) FROM c)) m
$$;
CREATE FUNCTION pg_temp.fillers() RETURNS void LANGUAGE sql AS $$
    SELECT count(*) FROM (SELECT cyclone.submit('solo') FROM generate_series(1, 63)) f
$$;
CREATE FUNCTION pg_temp.live_and_queued(p_run uuid) RETURNS boolean LANGUAGE sql AS $$
    SELECT NOT cyclone_test.archived(p_run) AND EXISTS (SELECT 1 FROM cyclone.cyclone_archive_queue q WHERE q.run_id = p_run)
$$;

SELECT cyclone.submit('solo') AS no_day \gset
SELECT pg_temp.fillers() \gset
SELECT is((SELECT count(*)::int FROM pg_temp.finish_all() a WHERE a), 64, 'completed on a day without history tables');
SELECT ok(pg_temp.live_and_queued(:'no_day'), 'the run stays live, queued for archive()');
SELECT is(cyclone_test.run_state(:'no_day'), 'completed', 'completed');

SELECT cyclone.tick() \gset
SELECT cyclone.define_limit('lim', 2) \gset
SELECT cyclone_test.limited('capped', '[{"name": "lim"}]') \gset
SELECT cyclone.submit('capped') AS capped \gset
SELECT pg_temp.fillers() \gset
SELECT is((SELECT count(*)::int FROM pg_temp.finish_all() a WHERE a), 64, 'a step holding a slot completes in the batch');
SELECT ok(pg_temp.live_and_queued(:'capped') AND cyclone_test.slots('lim') = 0, 'the usual way: live, queued, its slot given back');

SELECT cyclone_test.define('parent', '[{"name": "sub", "kind": "child", "workflow": "solo"}]') \gset
SELECT cyclone.submit('parent') AS parent \gset
SELECT (cyclone_test.step(:'parent', 'sub')).child_run_id AS child \gset
SELECT pg_temp.fillers() \gset
SELECT is((SELECT count(*)::int FROM pg_temp.finish_all() a WHERE a), 64, 'a child run''s step completes in the batch');
SELECT ok(pg_temp.live_and_queued(:'child') AND cyclone_test.run_state(:'parent') = 'completed',
          'the child run stays live and queued; its parent completed with it');

SELECT cyclone.submit('solo') AS stale \gset
SELECT pg_temp.fillers() \gset
CREATE TEMP TABLE c AS SELECT * FROM cyclone.claim('w1', NULL, 200);
SELECT is((SELECT array_agg(m.step_id) FROM cyclone.complete_many('w1',
              (SELECT array_agg(step_id ORDER BY step_id) FROM c),
              (SELECT array_agg(lease_generation + (run_id = :'stale')::int ORDER BY step_id) FROM c),
              (SELECT array_agg('{}'::jsonb) FROM c)) m WHERE NOT m.accepted),
          ARRAY[(SELECT step_id FROM c WHERE run_id = :'stale')], 'a stale generation is refused, the rest accepted');
SELECT ok(NOT cyclone_test.archived(:'stale') AND cyclone_test.state(:'stale') = 'running', 'and moves nothing');

SELECT cyclone_test.define('watch', '[{"name": "done", "kind": "await", "run": "input.job"}]') \gset
SELECT cyclone.complete_many('w1', ARRAY[(SELECT step_id FROM c WHERE run_id = :'stale')],
                             ARRAY[(SELECT lease_generation FROM c WHERE run_id = :'stale')], ARRAY['{}'::jsonb]) \gset
SELECT cyclone.submit('solo') AS awaited \gset
SELECT cyclone.submit('watch', jsonb_build_object('job', :'awaited')) AS watcher \gset
SELECT pg_temp.fillers() \gset
SELECT count(*) FROM pg_temp.finish_all() \gset
SELECT ok(cyclone_test.archived(:'awaited') AND cyclone_test.run_state(:'watcher') = 'completed',
          'an awaited run that ends straight into history ends its await node');

SELECT * FROM finish();
ROLLBACK;
