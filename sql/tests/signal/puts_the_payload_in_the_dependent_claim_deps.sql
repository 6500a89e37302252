-- The signal's payload is the wait node's output, so the dependent's claim sees
-- it under deps.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.define('sd', '[{"name": "prep"},
                                   {"name": "gate", "kind": "wait", "signal": "open"},
                                   {"name": "go", "deps": ["prep", "gate"]}]') \gset
SELECT cyclone.submit('sd', '{"order": 7}') AS run \gset
SELECT cyclone_test.run_node(:'run', 'prep', '{"prepared": true}') \gset
SELECT is(cyclone.signal(:'run', 'open', '{"code": "X1", "n": [1, 2]}'), true, 'signal accepted');
SELECT results_eq(
    $$SELECT node, input, deps FROM cyclone.claim('w1', ARRAY['go'])$$,
    $$VALUES ('go', '{"order": 7}'::jsonb, '{"gate": {"code": "X1", "n": [1, 2]}, "prep": {"prepared": true}}'::jsonb)$$,
    'the dependent sees the signal payload under deps.gate');

SELECT * FROM finish();
ROLLBACK;
