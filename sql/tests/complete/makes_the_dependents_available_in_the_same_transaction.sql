BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('chain', '[{"name":"a"},{"name":"b","deps":["a"]}]') AS wf \gset
SELECT cyclone.submit('chain') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'a') \gset
SELECT cyclone.advance_time('4 seconds') AS t1 \gset

SELECT is(cyclone_test.state(:'run', 'b'), 'pending', 'b waits on a');
SELECT ok(cyclone.complete(:step_id, 'w1', :gen, '"A"'), 'a completes');
SELECT is(cyclone_test.state(:'run', 'b'), 'available', 'b is available at once');
SELECT is((cyclone_test.step(:'run', 'b')).scheduled_at, :'t1'::timestamptz, 'b is scheduled now');

SELECT * FROM finish();
ROLLBACK;
