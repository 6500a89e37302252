-- complete_many asks _complete_solo_runs (which moves whole runs of one step to history) only when a step of
-- the batch is of a workflow of one node: a batch of 64 steps of two-node runs does not call it at all, and
-- completes them the usual way; one step of a one-node workflow in the batch does, and its run moves.
BEGIN;
SELECT plan(6);
SET LOCAL track_functions = 'pl';

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone_test.define('pair', '[{"name": "a"}, {"name": "b"}]') \gset
SELECT cyclone_test.travel_to('2031-06-01 12:00+00') \gset
-- Today's history tables.
SELECT cyclone.tick() \gset
CREATE FUNCTION pg_temp.finish_all() RETURNS SETOF boolean LANGUAGE sql AS $$
    WITH c AS (SELECT * FROM cyclone.claim('w1', NULL, 200))
    SELECT m.accepted FROM cyclone.complete_many('w1', (SELECT array_agg(step_id) FROM c),
                                                 (SELECT array_agg(lease_generation) FROM c),
                                                 (SELECT array_agg('{}'::jsonb) FROM c)) m
$$;
CREATE FUNCTION pg_temp.solo_calls() RETURNS bigint LANGUAGE sql AS $$
    SELECT coalesce(pg_stat_get_xact_function_calls(
        'cyclone._complete_solo_runs(text,bigint[],bigint[],jsonb[],timestamptz)'::regprocedure), 0)
$$;

SELECT count(*) FROM (SELECT cyclone.submit('pair') FROM generate_series(1, 32)) s \gset
SELECT is((SELECT count(*)::int FROM pg_temp.finish_all() a WHERE a), 64, 'a batch of 64 steps of two-node runs completes');
SELECT is(pg_temp.solo_calls(), 0::bigint, 'without asking _complete_solo_runs');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs r WHERE r.workflow = 'pair' AND r.state = 'completed'), 32,
          'each two-node run completed the usual way');

SELECT cyclone.submit('solo') AS solo \gset
SELECT count(*) FROM (SELECT cyclone.submit('pair') FROM generate_series(1, 32)) s \gset
SELECT is((SELECT count(*)::int FROM pg_temp.finish_all() a WHERE a), 65, 'a batch with one step of a one-node workflow completes');
SELECT is(pg_temp.solo_calls(), 1::bigint, 'asking _complete_solo_runs once');
SELECT ok(cyclone_test.archived(:'solo'), 'which moves that run to history');

SELECT * FROM finish();
ROLLBACK;
