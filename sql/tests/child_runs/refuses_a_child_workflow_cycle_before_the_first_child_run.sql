-- Issue 30, finding 12: a workflow whose child node is itself, or two workflows
-- that are each other's child, made 32 failed runs a submit. define_workflow
-- refuses such a cycle when it sees it; one it could not see (two definitions
-- committed at once, or definitions stored by an older release: here, written
-- directly) is refused when the advance would start the child: the child node is
-- discarded as child_failed, naming the cycle, before any child run exists.
BEGIN;
SELECT plan(11);

-- A workflow that is its own child, as an older release stored it.
SELECT cyclone_test.define('loop', '[{"name": "again", "kind": "child", "workflow": "later"}]');
UPDATE cyclone.cyclone_workflows SET definition = jsonb_set(definition, '{nodes,0,workflow}', '"loop"')
 WHERE name = 'loop';
SELECT cyclone.submit('loop') AS run \gset
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE workflow = 'loop'), 1,
          'no child run was started: one run, not 32');
SELECT results_eq(
    format($$SELECT state, error_kind, child_run_id FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'again'$$, :'run'),
    $$VALUES ('discarded', 'child_failed', NULL::uuid)$$,
    'the child node is discarded as child_failed');
SELECT is((cyclone_test.step(:'run', 'again')).error,
          'child workflow "loop" would start itself without end: "loop" -> "loop"',
          'the error names the cycle');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run failed');

-- Two workflows, each the other's child: the cycle closed behind define_workflow's back.
SELECT cyclone_test.define('ping', '[{"name": "work"}, {"name": "to_pong", "kind": "child", "workflow": "pong", "deps": ["work"]}]');
SELECT cyclone_test.define('pong', '[{"name": "to_ping", "kind": "child", "workflow": "nowhere"}]');
UPDATE cyclone.cyclone_workflows SET definition = jsonb_set(definition, '{nodes,0,workflow}', '"ping"')
 WHERE name = 'pong';
SELECT cyclone.submit('ping') AS ping \gset
SELECT is(cyclone_test.run_node(:'ping', 'work'), true, 'the parent''s own task runs');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE workflow = 'pong'), 0,
          'no run of the child workflow was started');
SELECT matches((cyclone_test.step(:'ping', 'to_pong')).error,
               '^child workflow "pong" would start itself without end: "ping" -> "pong" -> "ping"$',
               'the error names both workflows of the cycle');
SELECT is(cyclone_test.run_state(:'ping'), 'failed', 'the parent failed with child_failed');

-- A child workflow that merely reaches a cycle further down is refused too: by
-- define_workflow, and by the advance for a definition stored before.
SELECT throws_ok($$SELECT cyclone_test.define('top', '[{"name": "to_ping", "kind": "child", "workflow": "ping"}]')$$,
                 '22023', NULL, 'define_workflow refuses a child that leads into a stored cycle');
SELECT cyclone_test.define('top', '[{"name": "to_ping", "kind": "child", "workflow": "nothing"}]');
UPDATE cyclone.cyclone_workflows SET definition = jsonb_set(definition, '{nodes,0,workflow}', '"ping"')
 WHERE name = 'top';
SELECT cyclone.submit('top') AS top \gset
SELECT is((cyclone_test.step(:'top', 'to_ping')).error_kind, 'child_failed', 'a child leading into a cycle is refused');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE parent_run_id = :'top'), 0, 'before its first child run');

SELECT * FROM finish();
ROLLBACK;
