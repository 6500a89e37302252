-- cyclone_archive_queue holds exactly the finished runs of the live table,
-- each once with its finish time: a run enters it when it completes, fails or
-- is cancelled, and leaves it when archive() or prune() takes it or a retry
-- reopens it; a run a retry brings back from history enters it again only when
-- it finishes again.
BEGIN;
SELECT plan(12);

SELECT cyclone_test.one_step('solo', 1) \gset
CREATE FUNCTION pg_temp.queued() RETURNS uuid[] LANGUAGE sql AS $$
    SELECT coalesce(array_agg(q.run_id ORDER BY q.run_id), '{}') FROM cyclone.cyclone_archive_queue q
$$;
CREATE FUNCTION pg_temp.ids(VARIADIC p uuid[]) RETURNS uuid[] LANGUAGE sql AS $$
    SELECT array_agg(u ORDER BY u) FROM unnest(p) u
$$;

-- One at a time: the test's claim takes every available step of the handler.
SELECT cyclone.submit('solo') AS done \gset
SELECT is(pg_temp.queued(), '{}'::uuid[], 'nothing is queued while the run is live');
SELECT cyclone_test.run_node(:'done', 'work') \gset
SELECT cyclone.submit('solo') AS failed \gset
SELECT cyclone_test.fail_node(:'failed', 'work') \gset
SELECT cyclone.submit('solo') AS cancelled \gset
SELECT cyclone.cancel(:'cancelled') \gset
SELECT is(pg_temp.queued(), pg_temp.ids(:'done', :'failed', :'cancelled'),
          'a completed, a failed and a cancelled run are queued; the live one is not');
SELECT is((SELECT q.finished_at FROM cyclone.cyclone_archive_queue q WHERE q.run_id = :'done'),
          (SELECT r.finished_at FROM cyclone.cyclone_runs r WHERE r.id = :'done'), 'with the time it finished');
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'the queue and the runs agree');

SELECT cyclone.retry(:'failed', 'work', 1, 'again') \gset
SELECT is(pg_temp.queued(), pg_temp.ids(:'done', :'cancelled'), 'a retry takes the reopened run off the queue');
SELECT cyclone_test.run_node(:'failed', 'work') \gset
SELECT is(pg_temp.queued(), pg_temp.ids(:'done', :'failed', :'cancelled'), 'it is queued again when it completes');
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'once');

SELECT is(cyclone.archive(2), 2, 'archive takes two');
SELECT is(cardinality(pg_temp.queued()), 1, 'and they leave the queue');
SELECT cyclone.archive() \gset

SELECT cyclone.submit('solo') AS live \gset
SELECT cyclone_test.fail_node(:'live', 'work') \gset
SELECT cyclone.archive() \gset
SELECT cyclone.retry(:'live', 'work', 1, 'from history') \gset
SELECT is(pg_temp.queued(), '{}'::uuid[], 'a run a retry brings back from history is live, not queued');

SELECT cyclone.submit('solo') AS old \gset
SELECT cyclone_test.run_node(:'old', 'work') \gset
SELECT cyclone.advance_time('2 days') \gset
SELECT cyclone.prune('1 day') \gset
SELECT is(cyclone_test.archived(:'old'), NULL, 'prune deletes the finished run not archived yet');
SELECT is(pg_temp.queued(), '{}'::uuid[], 'and takes it off the queue');

SELECT * FROM finish();
ROLLBACK;
