-- Pausing does not cut off a step already running: its complete is accepted and
-- advances the DAG, but the next step waits for resume.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.define('pf', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]') \gset
SELECT cyclone.submit('pf') AS run \gset
SELECT step_id AS a_id, lease_generation AS a_gen FROM cyclone_test.claim_node(:'run', 'a') \gset
SELECT is(cyclone.pause(:'run'), true, 'paused while a runs');

SELECT is(cyclone.renew(:a_id, 'w1', :a_gen), true, 'the in-flight step can still renew its lease');
SELECT is(cyclone.complete(:a_id, 'w1', :a_gen, '{"n": 1}'), true, 'its complete is accepted');
SELECT is(cyclone_test.state(:'run', 'a'), 'completed', 'a is completed');
SELECT is((cyclone_test.step(:'run', 'a')).output, '{"n": 1}'::jsonb, 'with its output');
SELECT is(cyclone_test.state(:'run', 'b'), 'available', 'the DAG advanced: b is available');
SELECT is_empty($$SELECT * FROM cyclone.claim('w1')$$, 'but b is not claimed while paused');
SELECT is(cyclone_test.run_state(:'run'), 'paused', 'the run stays paused');

SELECT cyclone.resume(:'run') \gset
SELECT results_eq($$SELECT node, attempt, deps FROM cyclone.claim('w1')$$,
                  $$VALUES ('b', 1, '{"a": {"n": 1}}'::jsonb)$$,
                  'after resume b is claimed with a''s output');

SELECT * FROM finish();
ROLLBACK;
