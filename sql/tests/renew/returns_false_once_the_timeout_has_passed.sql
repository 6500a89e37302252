-- With a timeout, renew is true while started_at + timeout > now and false from
-- then on, even though the lease itself has not expired.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one', 3, '10 seconds') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1', '60 seconds') \gset
SELECT (cyclone_test.step(:'run')).lease_expiry AS expiry0 \gset

SELECT cyclone.advance_time('9.999 seconds') AS t1 \gset
SELECT ok(cyclone.renew(:step_id, 'w1', :gen, '60 seconds'), 'renew is true 1 ms before the timeout');
SELECT is((cyclone_test.step(:'run')).lease_expiry, :'t1'::timestamptz + interval '60 seconds', 'and extends the lease');

SELECT cyclone.advance_time('1 millisecond') AS t2 \gset
SELECT ok(NOT cyclone.renew(:step_id, 'w1', :gen, '60 seconds'), 'renew is false once started_at + timeout is reached');
SELECT is((cyclone_test.step(:'run')).lease_expiry, :'t1'::timestamptz + interval '60 seconds', 'the refused renew left the lease alone');
SELECT is((cyclone_test.step(:'run')).heartbeat_at, :'t1'::timestamptz, 'the refused renew left heartbeat_at alone');

SELECT * FROM finish();
ROLLBACK;
