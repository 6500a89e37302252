-- prune(older_than) deletes completed, failed and cancelled runs that finished
-- more than older_than ago (engine time), and nothing else: not a live run
-- however old, not a run that finished inside the window, not one exactly at
-- the cutoff.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('one', 1) AS wf \gset
SELECT cyclone.submit('one') AS done_run \gset
SELECT cyclone_test.run_node(:'done_run', 'work') \gset
SELECT cyclone.submit('one') AS failed_run \gset
SELECT cyclone_test.fail_node(:'failed_run', 'work', 'permanent') \gset
SELECT cyclone.submit('one') AS cancelled_run \gset
SELECT cyclone.cancel(:'cancelled_run', 'no longer wanted') \gset
SELECT cyclone.submit('one') AS live_run \gset
SELECT is(
    (SELECT array_agg(state ORDER BY state) FROM cyclone.cyclone_runs),
    ARRAY['cancelled', 'completed', 'failed', 'running'], 'one run in each state');

SELECT cyclone.advance_time('1 hour') \gset
SELECT is(cyclone.prune('1 hour'), 0, 'finished exactly one hour ago is not older than one hour');
SELECT cyclone.advance_time('1 millisecond') \gset
SELECT cyclone.submit('one') AS recent_run \gset
SELECT cyclone.cancel(:'recent_run') \gset

SELECT is(cyclone.prune('1 hour'), 3, 'the three runs finished over an hour ago are deleted');
SELECT is(
    (SELECT array_agg(id ORDER BY id) FROM cyclone.cyclone_runs),
    (SELECT array_agg(id ORDER BY id) FROM unnest(ARRAY[:'live_run'::uuid, :'recent_run'::uuid]) id),
    'the live run and the recently finished one are kept');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'live_run'), 1,
          'the live run keeps its step');
SELECT is(cyclone.prune('1 hour'), 0, 'a second prune finds nothing more');
SELECT cyclone.advance_time('1 millisecond') \gset
SELECT is(cyclone.prune('0 seconds'), 1, 'older_than 0 takes every finished run, and still not the live one');

SELECT * FROM finish();
ROLLBACK;
