-- A handler that was running when the deadline fired cannot complete or fail
-- the step afterwards: complete returns false, fail NULL, nothing changes.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('dll', '[{"name": "a"}, {"name": "b"}]') \gset
SELECT cyclone.submit('dll', '{}', '1 minute') AS run \gset
SELECT step_id AS a_id, lease_generation AS a_gen FROM cyclone_test.claim_node(:'run', 'a', 'w1', '1 hour') \gset
SELECT step_id AS b_id, lease_generation AS b_gen FROM cyclone_test.claim_node(:'run', 'b', 'w2', '1 hour') \gset
SELECT cyclone.advance_time('2 minutes') \gset
SELECT cyclone.enforce_deadlines() \gset

SELECT is(cyclone.renew(:a_id, 'w1', :a_gen), false, 'renew returns false: the handler must stop');
SELECT is(cyclone.complete(:a_id, 'w1', :a_gen, '{"late": true}'), false, 'a late complete returns false');
SELECT is(cyclone.fail(:b_id, 'w2', :b_gen, 'late boom'), NULL, 'a late fail returns NULL');
SELECT is(cyclone.fail(:b_id, 'w2', :b_gen, 'late boom', 'permanent'), NULL, 'a late permanent fail returns NULL');
SELECT results_eq(
    format($$SELECT node, state, error_kind, error, output FROM cyclone.cyclone_steps
              WHERE run_id = %L ORDER BY node$$, :'run'),
    $$VALUES ('a', 'discarded', 'deadline', 'run deadline exceeded', NULL::jsonb),
             ('b', 'discarded', 'deadline', 'run deadline exceeded', NULL::jsonb)$$,
    'both steps stay dead-lettered by the deadline, no late output stored');
SELECT is((cyclone_test.step(:'run', 'b')).attempt, 1, 'the late fail charged no attempt');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run stays failed');
SELECT is((cyclone.get_run(:'run')).error_kind, 'deadline', 'and still reports the deadline');

SELECT * FROM finish();
ROLLBACK;
