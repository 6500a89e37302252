-- A step that has never run is claimed as attempt 1 and the claim row carries
-- what the handler needs.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('one', 3) AS wf \gset
SELECT cyclone.submit('one', '{"order": 7}') AS run \gset

SELECT is((cyclone_test.step(:'run')).attempt, 0, 'attempt is 0 before the first claim');
SELECT results_eq(
    $$SELECT workflow, node, handler, attempt, max_attempts, lease_generation, timeout, input, deps
        FROM cyclone.claim('w1')$$,
    $$VALUES ('one'::text, 'work'::text, 'work'::text, 1, 3, 1::bigint, NULL::interval, '{"order": 7}'::jsonb, '{}'::jsonb)$$,
    'the fresh step is claimed as attempt 1 of 3, generation 1, with the run input and empty deps');
SELECT is((cyclone_test.step(:'run')).attempt, 1, 'the step row records attempt 1');
SELECT is(cyclone_test.state(:'run'), 'running', 'the step is running');
SELECT is((SELECT run_id FROM cyclone.cyclone_steps WHERE run_id = :'run'), :'run'::uuid, 'sanity: the row belongs to the run');
SELECT is_empty($$SELECT * FROM cyclone.claim('w2')$$, 'a running step is not claimed again');
SELECT is((cyclone_test.step(:'run')).lease_owner, 'w1', 'the second claim did not steal the lease');
SELECT is((cyclone_test.step(:'run')).attempt, 1, 'the second claim did not bump the attempt');

SELECT * FROM finish();
ROLLBACK;
