-- A child node discarded by max_wait (its child run cancelled), retried, submits
-- a new child run; that child's completion completes the node and the parent.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('kid', '[{"name":"kidwork"}]') AS kwf \gset
SELECT cyclone_test.define('parent', '[{"name":"inv","kind":"child","workflow":"kid","max_wait":"10 minutes"}]') AS pwf \gset
SELECT cyclone.submit('parent', '{"p": 1}') AS run \gset
SELECT (cyclone_test.step(:'run', 'inv')).child_run_id AS child1 \gset
SELECT cyclone.advance_time('11 minutes') AS t1 \gset
SELECT is((cyclone.tick() ->> 'max_wait')::int, 1, 'tick discards the child node');
SELECT is(cyclone_test.run_state(:'child1'), 'cancelled', 'its child run was cancelled');

SELECT lives_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'inv'), 'retry the child node');
SELECT (cyclone_test.step(:'run', 'inv')).child_run_id AS child2 \gset
SELECT isnt(:'child2'::uuid, :'child1'::uuid, 'a new child run was submitted');
SELECT results_eq(format('SELECT state, parent_run_id, parent_step_id, input FROM cyclone.cyclone_runs WHERE id = %L', :'child2'),
                  format($$VALUES ('running'::text, %L::uuid, %s::bigint, '{"p": 1}'::jsonb)$$, :'run', (SELECT id FROM cyclone.cyclone_steps WHERE run_id = :'run' AND node = 'inv')),
                  'the new child runs, linked to the parent node, with the parent''s input');
SELECT is(cyclone_test.state(:'run', 'inv'), 'waiting', 'the node waits on it');
SELECT ok(cyclone_test.run_node(:'child2', 'kidwork', '"made"'), 'the child''s step completes');
SELECT results_eq(format('SELECT state, output FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('completed'::text, '{"inv": {"kidwork": "made"}}'::jsonb)$$, 'the parent completes with the child''s output');

SELECT * FROM finish();
ROLLBACK;
