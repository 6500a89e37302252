-- SPEC 12 and 8: a run failing fast (a sibling discarded) cancels its running
-- step, which gives its slot back in the same transaction.
BEGIN;
SELECT plan(4);

SELECT cyclone.define_limit('l', 1);
SELECT cyclone.define_workflow('lw', '{"nodes": [{"name": "work", "limits": [{"name": "l"}]}, {"name": "bad"}]}');
SELECT cyclone.submit('lw') AS run \gset
SELECT cyclone.submit('lw') AS other \gset
SELECT c.step_id, c.lease_generation AS gen FROM cyclone.claim('w1', ARRAY['work'], 1) c \gset
SELECT is(cyclone_test.slots('l'), 1, 'the run''s limited step holds the one slot');
SELECT c.step_id AS bad_id, c.lease_generation AS bad_gen FROM cyclone.claim('w9', ARRAY['bad'], 1) c WHERE c.run_id = :'run' \gset
SELECT is(cyclone.fail(:bad_id, 'w9', :bad_gen, 'boom', 'permanent'), 'discarded', 'its sibling is discarded: the run fails');
SELECT is(cyclone_test.slots('l'), 0, 'the cancelled running step gave its slot back');
SELECT results_eq($$SELECT run_id FROM cyclone.claim('w2', ARRAY['work'], 10)$$, format($$VALUES (%L::uuid)$$, :'other'),
                  'the other run''s held-back step is claimed');

SELECT * FROM finish();
ROLLBACK;
