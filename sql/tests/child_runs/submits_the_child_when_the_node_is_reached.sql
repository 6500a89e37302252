-- A child node submits its child run only when reached: the child gets the
-- parent's input, parent_run_id and parent_step_id, and no deadline; the node
-- waits with child_run_id set.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('kid') \gset
SELECT cyclone_test.define('mom', '[{"name": "a"},
                                    {"name": "c", "kind": "child", "workflow": "kid", "deps": ["a"]},
                                    {"name": "b", "deps": ["c"]}]') \gset
SELECT cyclone.submit('mom', '{"order": 42}', '1 hour') AS run \gset

SELECT is(cyclone_test.state(:'run', 'c'), 'pending', 'the child node is pending');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE parent_run_id = :'run'), 0, 'no child run yet');

SELECT cyclone.advance_time('1 minute') \gset
SELECT cyclone_test.run_node(:'run', 'a') \gset
SELECT (cyclone_test.step(:'run', 'c')).id AS c_id \gset
SELECT (SELECT id FROM cyclone.cyclone_runs WHERE parent_run_id = :'run') AS child \gset

SELECT results_eq(
    format($$SELECT workflow, state, input, parent_run_id, parent_step_id, deadline_at, created_at
               FROM cyclone.cyclone_runs WHERE parent_run_id = %L$$, :'run'),
    format($$VALUES ('kid', 'running', '{"order": 42}'::jsonb, %L::uuid, %s::bigint, NULL::timestamptz, %L::timestamptz)$$,
           :'run', :'c_id', cyclone.now()),
    'one child run of kid, running, with the parent input and links, no deadline of its own');
SELECT results_eq(
    format($$SELECT state, child_run_id, started_at FROM cyclone.cyclone_steps WHERE id = %s$$, :'c_id'),
    format($$VALUES ('waiting', %L::uuid, %L::timestamptz)$$, :'child', cyclone.now()),
    'the child node waits on that child run since now');
SELECT is(cyclone_test.state(:'child', 'work'), 'available', 'the child''s own step is available');
SELECT is((cyclone_test.step(:'child', 'work')).input, '{"order": 42}'::jsonb, 'with the parent input');
SELECT is(cyclone_test.state(:'run', 'b'), 'pending', 'the node after the child still waits');

SELECT * FROM finish();
ROLLBACK;
