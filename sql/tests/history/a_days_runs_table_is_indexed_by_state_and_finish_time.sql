-- The live table has no index on a run's state or finish time (live_runs.sql);
-- a day's table of runs has both, for the list pages and for prune.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone_test.travel_to('2030-01-07 10:00+00') \gset
SELECT cyclone.submit('solo') AS run \gset
SELECT cyclone_test.run_node(:'run', 'work') \gset
SELECT is(cyclone.archive(), 1, 'the run is archived');

CREATE FUNCTION pg_temp.indexed(p_table regclass, p_def text) RETURNS boolean LANGUAGE sql AS $$
    SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE format('%I.%I', schemaname, tablename)::regclass = p_table
                      AND indexdef LIKE '%' || p_def)
$$;
SELECT ok(pg_temp.indexed('cyclone.cyclone_runs_2030_01_07', 'btree (state, created_at, id)'),
          'its day''s table has the runs by state, newest first');
SELECT ok(pg_temp.indexed('cyclone.cyclone_runs_2030_01_07', 'btree (finished_at)'),
          'and by finish time');

SELECT * FROM finish();
ROLLBACK;
