-- SPEC 16: a node is reached when each dependency is completed or skipped; a node with a skipped dependency is
-- skipped too, unless it declares "on_dep_skipped": "run", and then the skipped dependency is absent from its
-- deps (claim's and the condition document's).
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('chain', '[
    {"name": "a"},
    {"name": "b", "deps": ["a"], "when": {"input": {"go": true}}},
    {"name": "c", "deps": ["b"]},
    {"name": "d", "deps": ["b"], "kind": "sleep", "duration": "1 hour"},
    {"name": "join", "deps": ["a", "b"], "on_dep_skipped": "run"}]');
SELECT cyclone.submit('chain', '{"go": false}') AS run \gset
SELECT cyclone_test.run_node(:'run', 'a', '"A"');

SELECT is(cyclone_test.state(:'run', 'b'), 'skipped', 'the condition fails: skipped');
SELECT is(cyclone_test.state(:'run', 'c'), 'skipped', 'a task after it is skipped too');
SELECT is(cyclone_test.state(:'run', 'd'), 'skipped', 'so is a sleep');
SELECT is(cyclone_test.state(:'run', 'join'), 'available', 'on_dep_skipped "run" runs it');
SELECT is(c.deps, '{"a": "A"}'::jsonb, 'without the skipped dependency in its deps')
  FROM cyclone_test.claim_node(:'run', 'join') c;
SELECT is(cyclone.explain_step((cyclone_test.step(:'run', 'c')).id), '{"reason": "skipped"}'::jsonb,
          'explain_step says skipped');
SELECT throws_ok($$SELECT cyclone_test.define('bad', '[{"name": "a", "on_dep_skipped": "maybe"}]')$$, '22023',
                 'workflow "bad": node "a": on_dep_skipped must be "skip" or "run", got "maybe"',
                 'on_dep_skipped is skip or run');

SELECT * FROM finish();
ROLLBACK;
