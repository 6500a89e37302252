-- The deadline does not elapse while paused: enforce_deadlines() and tick() leave
-- a paused run alone however long the pause, and its steps untouched.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('pd', '[{"name": "a"}, {"name": "w", "kind": "wait", "max_wait": "5 minutes"}]') \gset
SELECT cyclone.submit('pd', '{}', '30 minutes') AS run \gset
SELECT cyclone.advance_time('10 minutes') \gset
SELECT cyclone.pause(:'run') \gset
SELECT cyclone.advance_time('1 day') \gset

SELECT is_empty($$SELECT cyclone.enforce_deadlines()$$, 'enforce_deadlines skips the paused run');
SELECT is((cyclone.tick())->>'deadlines', '0', 'tick counts no deadline');
SELECT is(cyclone_test.run_state(:'run'), 'paused', 'the run is still paused');
SELECT is(cyclone_test.state(:'run', 'a'), 'available', 'its task is still available');
SELECT is(cyclone_test.state(:'run', 'w'), 'waiting', 'its wait node is still waiting (no max_wait either)');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'run' AND error_kind IS NOT NULL), 0,
          'no step carries an error');

SELECT * FROM finish();
ROLLBACK;
