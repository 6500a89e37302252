-- prune() drops every history day that ended before the cutoff, tables and
-- all, and deletes the older runs of the day the cutoff falls in row by row:
-- exactly the runs finished before the cutoff go.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('daily') \gset
CREATE TEMP TABLE runs (day int, id uuid);
SELECT cyclone_test.travel_to('2030-03-01 10:00+00') \gset
INSERT INTO runs SELECT 1, cyclone.submit('daily');
SELECT cyclone_test.run_node(id, 'work') FROM runs WHERE day = 1;
SELECT cyclone_test.travel_to('2030-03-02 10:00+00') \gset
INSERT INTO runs SELECT 2, cyclone.submit('daily');
SELECT cyclone_test.run_node(id, 'work') FROM runs WHERE day = 2;
SELECT cyclone_test.travel_to('2030-03-03 06:00+00') \gset
INSERT INTO runs SELECT 3, cyclone.submit('daily');
SELECT cyclone_test.run_node(id, 'work') FROM runs WHERE day = 3;
SELECT cyclone_test.travel_to('2030-03-03 18:00+00') \gset
INSERT INTO runs SELECT 4, cyclone.submit('daily');
SELECT cyclone_test.run_node(id, 'work') FROM runs WHERE day = 4;
SELECT is(cyclone.archive(), 4, 'four runs over three days archived');

-- Cutoff: 2030-03-03 12:00 UTC.
SELECT cyclone_test.travel_to('2030-03-04 12:00+00') \gset
SELECT is(cyclone.prune('1 day', 1000), 3, 'the runs of March 1 and 2, and the morning of March 3, go');
SELECT is(to_regclass('cyclone.cyclone_runs_2030_03_01'), NULL, 'March 1''s run table is dropped');
SELECT is(to_regclass('cyclone.cyclone_steps_2030_03_02'), NULL, 'March 2''s step table is dropped');
SELECT is(ARRAY(SELECT day::text FROM cyclone.cyclone_history ORDER BY day), ARRAY['2030-03-03'],
          'March 3 still has its tables');
SELECT results_eq('SELECT id FROM cyclone.cyclone_runs', 'SELECT id FROM runs WHERE day = 4',
                  'only the run finished after the cutoff is left');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps), 1, 'with its step');
SELECT is(cyclone.prune('1 day', 1000), 0, 'a second prune finds nothing');

SELECT * FROM finish();
ROLLBACK;
