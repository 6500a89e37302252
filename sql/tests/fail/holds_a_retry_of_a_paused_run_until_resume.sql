-- An in-flight failure of a paused run counts (attempt charged, backoff set),
-- but the retry is not claimed until the run resumes.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one', 5) AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT cyclone.pause(:'run') AS paused \gset

SELECT is(cyclone.fail(:step_id, 'w1', :gen, 'boom', 'error', '0 seconds'), 'available', 'the in-flight failure is recorded');
SELECT is_empty($$SELECT * FROM cyclone.claim('w1', NULL, 10)$$, 'the retry is not claimed while paused');
SELECT ok(cyclone.resume(:'run'), 'resume');
SELECT is((SELECT attempt FROM cyclone.claim('w1', NULL, 10)), 2, 'after resume the retry is claimed as attempt 2');

SELECT * FROM finish();
ROLLBACK;
