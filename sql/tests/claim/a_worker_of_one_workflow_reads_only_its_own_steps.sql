-- Claims at scale (issue 32): the claim of a worker that serves one workflow walks that workflow's part of
-- queue 0 (cyclone_steps_claimable_workflow), so another workflow's backlog ahead of its steps is never read.
-- Until 0.33.0 it walked queue 0 past every step ahead and probed the run of each whose handler matched:
-- 300 probes here, 170 ms a claim behind 100,000 steps. Claim order, the floor's ranges and the handler
-- filter hold within the workflow.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('wa', '[{"name":"prepare"}]') AS wa \gset
SELECT cyclone_test.define('wb', '[{"name":"prepare"}]') AS wb \gset
SELECT count(cyclone.submit('wa')) FROM generate_series(1, 300);
SELECT cyclone.submit('wb') AS b1 \gset
SELECT cyclone.submit('wb') AS b2 \gset
SELECT cyclone.submit('wb') AS b3 \gset

-- The runs probed and the claim index's entries read, in this transaction so far.
CREATE TEMP VIEW reads AS
SELECT pg_stat_get_xact_numscans('cyclone.cyclone_runs_pkey'::regclass) AS run_probes,
       pg_stat_get_xact_tuples_returned('cyclone.cyclone_steps_claimable'::regclass) AS queue_entries;
CREATE TEMP TABLE before AS SELECT * FROM reads;

SELECT results_eq($$SELECT run_id FROM cyclone.claim('w1', ARRAY['prepare'], 2, '30 seconds', ARRAY['wb'])$$,
                  ARRAY[:'b1'::uuid, :'b2'::uuid], 'a worker of wb behind 300 steps of wa takes wb''s first two');
SELECT cmp_ok((SELECT r.run_probes - b.run_probes FROM reads r, before b), '<=', 4::bigint,
              'it probes the runs of its own steps only, none of wa''s (the same handler name)');
SELECT is((SELECT r.queue_entries - b.queue_entries FROM reads r, before b), 0::bigint,
          'it does not walk queue 0');

-- Claim order within the workflow: a better priority submitted later comes first.
SELECT cyclone.submit('wb', '{}', NULL, NULL, NULL, NULL, -5) AS urgent \gset
SELECT is((SELECT run_id FROM cyclone.claim('w1', ARRAY['prepare'], 1, '30 seconds', ARRAY['wb'])), :'urgent'::uuid,
          'a better priority is claimed first');

-- The floor's ranges: a step below a fresh floor waits while a step past it is due; the next tick lowers
-- the floor to it.
SELECT cyclone.advance_time('5 seconds') AS t \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT cyclone.submit('wb', '{}', NULL, NULL, cyclone.now() - interval '1 hour') AS past \gset
SELECT is((SELECT run_id FROM cyclone.claim('w1', ARRAY['prepare'], 1, '30 seconds', ARRAY['wb'])), :'b3'::uuid,
          'the step below the floor waits while one past it is due');
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT is((SELECT run_id FROM cyclone.claim('w1', ARRAY['prepare'], 1, '30 seconds', ARRAY['wb'])), :'past'::uuid,
          'after the next tick it is claimed');

SELECT is_empty($$SELECT * FROM cyclone.claim('w1', ARRAY['other'], 5, '30 seconds', ARRAY['wb'])$$,
                'the handler filter still applies');

SELECT * FROM finish();
ROLLBACK;
