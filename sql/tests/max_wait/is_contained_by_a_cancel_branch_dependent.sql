-- A max_wait expiry is an ordinary discard: a cancel_branch dependent contains
-- it and the rest of the run completes.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('mc', '[{"name": "main"},
                                   {"name": "w", "kind": "wait", "max_wait": "5 minutes"},
                                   {"name": "after", "deps": ["w"], "on_dep_failure": "cancel_branch"}]') \gset
SELECT cyclone.submit('mc') AS run \gset
SELECT cyclone.advance_time('6 minutes') \gset
SELECT is((cyclone.tick())->>'max_wait', '1', 'the wait expires');
SELECT is(cyclone_test.state(:'run', 'after'), 'cancelled', 'its branch is cancelled');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run goes on');
SELECT cyclone_test.run_node(:'run', 'main', '"m"') \gset
SELECT results_eq(format($$SELECT state, error_kind, output FROM cyclone.get_run(%L)$$, :'run'),
                  $$VALUES ('completed', NULL::text, '{"main": "m"}'::jsonb)$$,
                  'the run completes without the contained branch');

SELECT * FROM finish();
ROLLBACK;
