-- list_runs, list_steps and list_dead_letters return the rows of their views,
-- filtered, newest first, and limited (SPEC 15); a bad limit or state is 22023.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.travel_to('2030-01-07 10:00+00');
SELECT cyclone_test.one_step('a');
SELECT cyclone_test.define('b', '[{"name": "x"}, {"name": "y", "deps": ["x"]}]', 1);
SELECT cyclone.submit('a') FROM generate_series(1, 3);
SELECT cyclone.advance_time('1 second');
SELECT cyclone.submit('b') AS b1 \gset
SELECT cyclone.advance_time('1 second');
SELECT cyclone.submit('b') AS b2 \gset
SELECT cyclone_test.fail_node(:'b1', 'x');

SELECT is((SELECT array_agg(id) FROM cyclone.list_runs(p_limit => 2)), ARRAY[:'b2', :'b1']::uuid[],
          'list_runs: newest first, limited');
SELECT is((SELECT count(*)::int FROM cyclone.list_runs('a')), 3, 'filtered by workflow');
SELECT is((SELECT array_agg(id) FROM cyclone.list_runs(p_state => 'failed')), ARRAY[:'b1']::uuid[], 'and by state');
SELECT is((SELECT array_agg(id) FROM cyclone.list_runs('b', p_before => (SELECT created_at FROM cyclone.cyclone_runs WHERE id = :'b2'))),
          ARRAY[:'b1']::uuid[], 'p_before gives the next page');
SELECT is((SELECT array_agg(node) FROM cyclone.list_steps(:'b2')), ARRAY['x', 'y'], 'list_steps: a run''s steps in order');
SELECT results_eq($$SELECT * FROM cyclone.list_dead_letters('b')$$, $$SELECT * FROM cyclone.cyclone_v_dlq$$,
                  'list_dead_letters: the rows of cyclone_v_dlq');
SELECT is((SELECT count(*)::int FROM cyclone.list_dead_letters(p_error_kind => 'timeout')), 0, 'filtered by error kind');
SELECT throws_ok($$SELECT * FROM cyclone.list_runs(p_limit => 0)$$, '22023', 'list_runs: p_limit must be from 1 to 10000, not 0');
SELECT throws_ok($$SELECT * FROM cyclone.list_runs(p_state => 'done')$$, '22023',
                 'list_runs: p_state must be running, paused, completed, failed or cancelled, not "done"');

SELECT * FROM finish();
ROLLBACK;
