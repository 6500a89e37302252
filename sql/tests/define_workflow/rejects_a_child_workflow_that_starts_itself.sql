-- Issue 30, finding 12: a workflow whose child node is itself, or two workflows that are each other's
-- child, was accepted, and every submit then made 32 failed runs. define_workflow refuses child nodes
-- that lead, through the stored definitions, to a workflow that starts itself: 22023, nothing written
-- (a refused redefinition keeps the previous one). Workflows nested without a cycle are accepted.
BEGIN;
SELECT plan(9);

SELECT throws_ok($$SELECT cyclone_test.define('self', '[{"name": "again", "kind": "child", "workflow": "self"}]')$$,
                 '22023', 'workflow "self": child workflows would start themselves without end: "self" -> "self"',
                 'a workflow whose child node is itself');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'self'), 0, 'nothing was written');

-- Two workflows, each the other's child: the second definition closes the cycle.
SELECT cyclone_test.define('ping', '[{"name": "to_pong", "kind": "child", "workflow": "pong"}]');
SELECT throws_ok($$SELECT cyclone_test.define('pong', '[{"name": "t"}, {"name": "to_ping", "kind": "child", "workflow": "ping", "deps": ["t"]}]')$$,
                 '22023', 'workflow "pong": child workflows would start themselves without end: "ping" -> "pong" -> "ping"',
                 'two workflows that are each other''s child');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'pong'), 0, 'nothing was written');

-- Three, closed by a redefinition: the old definition stays.
SELECT cyclone_test.define('a', '[{"name": "to_b", "kind": "child", "workflow": "b"}]');
SELECT cyclone_test.define('b', '[{"name": "to_c", "kind": "child", "workflow": "c"}]');
SELECT cyclone_test.define('c', '[{"name": "plain"}]');
SELECT throws_ok($$SELECT cyclone_test.define('c', '[{"name": "to_a", "kind": "child", "workflow": "a"}]')$$,
                 '22023', NULL, 'a redefinition that closes a three-workflow cycle');
SELECT is((SELECT definition #>> '{nodes,0,name}' FROM cyclone.cyclone_workflows WHERE name = 'c'), 'plain',
          'the previous definition stays');

-- Nested without a cycle: a diamond of workflows, a child used twice, an undefined child.
SELECT lives_ok($$SELECT cyclone_test.define('d_leaf', '[{"name": "t"}]')$$, 'a leaf workflow');
SELECT lives_ok($$SELECT cyclone_test.define('d_left', '[{"name": "k", "kind": "child", "workflow": "d_leaf"}]')$$,
                'a child of the leaf');
SELECT lives_ok($$SELECT cyclone_test.define('d_top', '[{"name": "l", "kind": "child", "workflow": "d_left"},
                                                         {"name": "r", "kind": "child", "workflow": "d_leaf"},
                                                         {"name": "l2", "kind": "child", "workflow": "d_left", "deps": ["l"]},
                                                         {"name": "u", "kind": "child", "workflow": "undefined_yet"}]')$$,
                'a diamond of workflows, a child used twice and one not defined yet are accepted');
SELECT * FROM finish();
ROLLBACK;
