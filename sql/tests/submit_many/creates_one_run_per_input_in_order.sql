-- submit_many creates one run per input and returns their ids in input order;
-- each run gets its own steps, and the deadline applies to every run.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('pair', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]');
SELECT cyclone.advance_time('1 hour');
CREATE TEMP TABLE t AS
SELECT id AS run_id, ord
  FROM cyclone.submit_many('pair', ARRAY['{"i": 1}', '{"i": 2}', '{"i": 3}']::jsonb[], interval '10 minutes')
       WITH ORDINALITY AS x(id, ord);

SELECT is((SELECT count(*)::int FROM t), 3, 'three ids returned');
SELECT results_eq(
    $$SELECT t.ord::int, r.input, r.state, r.workflow, r.deadline_at FROM t JOIN cyclone.cyclone_runs r ON r.id = t.run_id ORDER BY t.ord$$,
    $$VALUES (1, '{"i": 1}'::jsonb, 'running'::text, 'pair'::text, cyclone.now() + interval '10 minutes'),
             (2, '{"i": 2}', 'running', 'pair', cyclone.now() + interval '10 minutes'),
             (3, '{"i": 3}', 'running', 'pair', cyclone.now() + interval '10 minutes')$$,
    'the i-th id is the run of the i-th input, running, with the deadline');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 3, 'three runs in all');
SELECT results_eq(
    $$SELECT t.ord::int, s.node, s.state, s.input FROM t JOIN cyclone.cyclone_steps s ON s.run_id = t.run_id ORDER BY t.ord, s.node$$,
    $$VALUES (1, 'a'::text, 'available'::text, '{"i": 1}'::jsonb), (1, 'b', 'pending', '{"i": 1}'),
             (2, 'a', 'available', '{"i": 2}'), (2, 'b', 'pending', '{"i": 2}'),
             (3, 'a', 'available', '{"i": 3}'), (3, 'b', 'pending', '{"i": 3}')$$,
    'each run has its own steps, carrying its own input');
SELECT is((SELECT count(*)::int FROM cyclone.submit_many('pair', ARRAY[]::jsonb[])), 0, 'an empty array makes no runs');
SELECT is((SELECT count(DISTINCT run_id)::int FROM t), 3, 'the ids are distinct');

SELECT * FROM finish();
ROLLBACK;
