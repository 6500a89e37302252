-- archive() moves finished runs, with their steps, into the tables of the UTC
-- day they finished; live runs stay. The names users query still show them.
BEGIN;
SELECT plan(12);

SELECT cyclone_test.define('two', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]') \gset
SELECT cyclone_test.travel_to('2030-01-07 23:00+00') \gset
SELECT cyclone.submit('two', '{"n": 1}') AS done \gset
SELECT cyclone_test.run_node(:'done', 'a', '{"x": 1}') \gset
SELECT cyclone_test.run_node(:'done', 'b', '{"y": 2}') \gset
SELECT cyclone.submit('two', '{"n": 2}') AS live \gset
SELECT cyclone_test.run_node(:'live', 'a') \gset

SELECT is(cyclone.archive(), 1, 'one finished run archived');
SELECT is(cyclone_test.archived(:'done'), true, 'the finished run is in a day table');
SELECT is(cyclone_test.archived(:'live'), false, 'the live run stays in the live table');
SELECT is((SELECT h.runs::text FROM cyclone.cyclone_history h WHERE h.day = '2030-01-07'),
          'cyclone.cyclone_runs_2030_01_07', 'the day it finished (UTC) has its tables');
SELECT is((SELECT count(*)::int FROM ONLY cyclone.cyclone_steps WHERE run_id = :'done'), 0,
          'no step of it is left in the live table');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'done' AND state = 'completed'), 2,
          'cyclone_steps still shows both of its steps');
SELECT is((SELECT state FROM cyclone.cyclone_v_runs WHERE id = :'done'), 'completed', 'cyclone_v_runs shows it');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_steps WHERE run_id = :'done'), 2, 'cyclone_v_steps shows its steps');
SELECT is((SELECT output FROM cyclone.get_run(:'done')), '{"b": {"y": 2}}'::jsonb, 'get_run reads it, output and all');
SELECT is(cyclone.archive(), 0, 'nothing more to archive');
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'the engine''s invariants hold across the boundary');
SELECT throws_ok($$SELECT cyclone.archive(0)$$, '22023', NULL, 'a limit below 1 is refused');

SELECT * FROM finish();
ROLLBACK;
