-- complete is a compare-and-set: true once, with the output stored, the lease
-- cleared and the run advanced; the duplicate is false and changes nothing.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset
SELECT cyclone.advance_time('3 seconds') AS t1 \gset

SELECT ok(cyclone.complete(:step_id, 'w1', :gen, '{"paid": true}'), 'the first complete is true');
SELECT is(cyclone_test.state(:'run'), 'completed', 'the step is completed');
SELECT is((cyclone_test.step(:'run')).output, '{"paid": true}'::jsonb, 'its output is stored');
SELECT is((cyclone_test.step(:'run')).finished_at, :'t1'::timestamptz, 'finished_at = now');
SELECT ok((cyclone_test.step(:'run')).lease_owner IS NULL AND (cyclone_test.step(:'run')).lease_expiry IS NULL,
          'the lease is cleared');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'the single-step run completed in the same transaction');
SELECT is((SELECT output FROM cyclone.get_run(:'run')), '{"work": {"paid": true}}'::jsonb, 'the run output maps the leaf to its output');

SELECT cyclone.advance_time('3 seconds') AS t2 \gset
SELECT ok(NOT cyclone.complete(:step_id, 'w1', :gen, '{"paid": false}'), 'the duplicate complete is false');
SELECT is((cyclone_test.step(:'run')).output, '{"paid": true}'::jsonb, 'the duplicate did not overwrite the output');
SELECT is((cyclone_test.step(:'run')).finished_at, :'t1'::timestamptz, 'the duplicate did not move finished_at');

SELECT * FROM finish();
ROLLBACK;
