-- tick() makes today's and tomorrow's history tables before any run needs them,
-- and archives the runs that finished.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.travel_to('2030-07-10 12:00+00') \gset
SELECT cyclone_test.one_step('t') \gset
SELECT cyclone.submit('t') AS run \gset
SELECT cyclone_test.run_node(:'run', 'work') \gset
SELECT is((cyclone.tick() ->> 'archived')::int, 1, 'tick archives the finished run');
SELECT ok(ARRAY['2030-07-10', '2030-07-11']::date[] <@ ARRAY(SELECT day FROM cyclone.cyclone_history),
          'today and tomorrow have their tables');
SELECT is(cyclone_test.archived(:'run'), true, 'the run is in today''s');

SELECT * FROM finish();
ROLLBACK;
