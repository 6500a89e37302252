-- prune drops at most ten history days a call (each holds its locks until the
-- commit) and leaves the runs of the days it did not reach to a later call,
-- which drops those days whole instead of deleting their runs row by row.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('d') \gset
SELECT cyclone_test.travel_to('2030-09-12 12:00+00') \gset
SELECT cyclone.submit('d') AS run \gset
SELECT cyclone_test.run_node(:'run', 'work') \gset
SELECT cyclone.archive() \gset
SELECT count(*) FROM (SELECT cyclone._history_day(('2030-09-01'::date + g)) FROM generate_series(0, 10) g) x;
SELECT cyclone_test.travel_to('2030-10-01 12:00+00') \gset
SELECT is(cyclone.prune('1 day'), 0, 'the first call drops the ten oldest days, all empty');
SELECT is(ARRAY(SELECT day::text FROM cyclone.cyclone_history WHERE day < '2030-09-30' ORDER BY day),
          ARRAY['2030-09-11', '2030-09-12'], 'and leaves the two newer ones');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'with the run of the later one untouched');
SELECT is(cyclone.prune('1 day'), 1, 'the next call drops those two days, the run with them');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_history WHERE day < '2030-09-30'), 0, 'none is left');

SELECT * FROM finish();
ROLLBACK;
