-- A finished run of the live table missing from cyclone_archive_queue, queued
-- twice, or queued with another finish time, and a queue entry for a run that
-- is live or gone, are each reported (live_runs.sql).
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone.submit('solo') AS done \gset
SELECT cyclone.submit('solo') AS live \gset
SELECT cyclone_test.run_node(:'done', 'work') \gset
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'consistent to begin with');

CREATE FUNCTION pg_temp.found() RETURNS SETOF text LANGUAGE sql AS $$
    SELECT invariant || ' ' || coalesce(detail ->> 'run_id', '') FROM cyclone.check_invariants() ORDER BY 1
$$;

SAVEPOINT s;
DELETE FROM cyclone.cyclone_archive_queue WHERE run_id = :'done';
SELECT results_eq('SELECT pg_temp.found()', ARRAY['finished_run_not_queued_for_archive ' || :'done'],
                  'a finished run that is not queued');
ROLLBACK TO SAVEPOINT s;

INSERT INTO cyclone.cyclone_archive_queue SELECT run_id, finished_at FROM cyclone.cyclone_archive_queue;
SELECT results_eq('SELECT pg_temp.found()', ARRAY['finished_run_not_queued_for_archive ' || :'done'],
                  'a finished run queued twice');
ROLLBACK TO SAVEPOINT s;

UPDATE cyclone.cyclone_archive_queue SET finished_at = finished_at - interval '1 hour';
SELECT results_eq('SELECT pg_temp.found()', ARRAY['archive_queue_without_finished_run ' || :'done',
                                                 'finished_run_not_queued_for_archive ' || :'done'],
                  'a run queued with another finish time');
ROLLBACK TO SAVEPOINT s;

INSERT INTO cyclone.cyclone_archive_queue VALUES (:'live', cyclone.now()), (gen_random_uuid(), cyclone.now());
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants() WHERE invariant = 'archive_queue_without_finished_run'), 2,
          'entries for a live run and for no run');
ROLLBACK TO SAVEPOINT s;

-- No finish(): each ROLLBACK TO SAVEPOINT above also rolls back pgTAP's record of the tests run
-- in it, so finish() would count only those before the first savepoint; pg_prove checks the plan
-- against the ok lines printed.
ROLLBACK;
