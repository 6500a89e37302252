-- The documented queries for runs failed by their deadline (a join of
-- cyclone_runs and cyclone_steps, and cyclone_v_steps) read archived runs too.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('late') \gset
SELECT cyclone.submit('late', '{}', '1 minute') AS run \gset
SELECT cyclone.advance_time('2 minutes') \gset
SELECT is((cyclone.tick() ->> 'archived')::int, 1, 'tick fails it by its deadline and archives it');

SELECT results_eq(
    $$SELECT DISTINCT r.id FROM cyclone.cyclone_runs r JOIN cyclone.cyclone_steps s ON s.run_id = r.id
       WHERE s.error_kind = 'deadline'$$,
    format('VALUES (%L::uuid)', :'run'),
    'the join of cyclone_runs and cyclone_steps finds it');
SELECT results_eq(
    $$SELECT run_id, node, error FROM cyclone.cyclone_v_steps WHERE error_kind = 'deadline'$$,
    format($$VALUES (%L::uuid, 'work', 'run deadline exceeded')$$, :'run'),
    'cyclone_v_steps finds its dead-lettered step');

SELECT * FROM finish();
ROLLBACK;
