-- Workflow, node, handler and signal names (and a child node's workflow) are
-- 1 to 200 characters with no control characters: 22023 otherwise, nothing
-- written, and the message shows at most 40 characters of the name.
BEGIN;
SELECT plan(12);

SELECT lives_ok($$SELECT cyclone.define_workflow(repeat('w', 200), '{"nodes": [{"name": "a"}]}')$$,
                'a 200-character workflow name is fine');
SELECT throws_ok($$SELECT cyclone.define_workflow(repeat('w', 201), '{"nodes": [{"name": "a"}]}')$$,
                 '22023', NULL, 'a 201-character workflow name: 22023');
SELECT throws_ok($$SELECT cyclone.define_workflow(E'bad\nname', '{"nodes": [{"name": "a"}]}')$$,
                 '22023', 'define_workflow: the workflow name "bad\nname" contains a control character',
                 'a control character in the workflow name: 22023, escaped in the message');
SELECT throws_ok($$SELECT cyclone.define_workflow(repeat('x', 100000), '{"nodes": [{"name": "a"}]}')$$,
                 '22023', 'define_workflow: the workflow name "' || repeat('x', 40) || '..." is 100000 characters long (at most 200)',
                 'a 100,000-character name is not printed in full');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', jsonb_build_object('nodes', jsonb_build_array(
                      jsonb_build_object('name', repeat('n', 201)))))$$,
                 '22023', NULL, 'a 201-character node name: 22023');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a\u0007"}]}')$$,
                 '22023', 'workflow "w": node name "a\u0007" contains a control character', 'a control character in a node name');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', jsonb_build_object('nodes', jsonb_build_array(
                      jsonb_build_object('name', 'a', 'handler', repeat('h', 201)))))$$,
                 '22023', NULL, 'a 201-character handler name: 22023');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', '{"nodes": [{"name": "a", "kind": "wait", "signal": "go\t"}]}')$$,
                 '22023', 'workflow "w": node "a": signal "go\t" contains a control character', 'a control character in a signal name');
SELECT throws_ok($$SELECT cyclone.define_workflow('w', jsonb_build_object('nodes', jsonb_build_array(
                      jsonb_build_object('name', 'a', 'kind', 'child', 'workflow', repeat('c', 300)))))$$,
                 '22023', NULL, 'a child node''s 300-character workflow: 22023');
SELECT lives_ok($$SELECT cyclone.define_workflow('w', jsonb_build_object('nodes', jsonb_build_array(
                      jsonb_build_object('name', repeat('n', 200), 'handler', 'ünïcødé ✓'))))$$,
                'a 200-character node name and a non-ASCII handler are fine');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'w'), 1, 'w was written by the good call only');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows), 2, 'nothing else was written');

SELECT * FROM finish();
ROLLBACK;
