-- A late completion from a worker whose lease was reclaimed is refused, both
-- before and after another worker claimed the step again.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') \gset
SELECT cyclone.advance_time('11 seconds') AS t1 \gset
SELECT is((SELECT action FROM cyclone.sweep()), 'reclaimed', 'the lease is reclaimed');

SELECT ok(NOT cyclone.complete(:step_id, 'w1', :gen, '"late"'), 'the late complete is false while the step is available');
SELECT is(cyclone_test.state(:'run'), 'available', 'the step stays available');

SELECT step_id AS step2, lease_generation AS gen2 FROM cyclone_test.claim_node(:'run', 'work', 'w2') \gset
SELECT ok(NOT cyclone.complete(:step_id, 'w1', :gen, '"late"'), 'the late complete is false after the re-claim');
SELECT is((cyclone_test.step(:'run')).lease_owner, 'w2', 'the new lease is untouched');
SELECT ok(cyclone.complete(:step_id, 'w2', :gen2, '"fresh"'), 'the new owner completes');
SELECT is((cyclone_test.step(:'run')).output, '"fresh"'::jsonb, 'with the new owner''s output');

SELECT * FROM finish();
ROLLBACK;
