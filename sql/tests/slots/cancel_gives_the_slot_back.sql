-- SPEC 12: a running step holds its slot until it leaves running; cancel of its run
-- gives it back in the same transaction, and the next claim takes it.
BEGIN;
SELECT plan(4);

SELECT cyclone.define_limit('l', 1);
SELECT cyclone_test.limited('lw', '[{"name": "l"}]');
SELECT cyclone.submit('lw', '{"t": "a"}') AS run \gset
SELECT cyclone.submit('lw', '{"t": "a"}') AS other \gset
SELECT step_id, lease_generation AS gen FROM cyclone.claim('w1', NULL, 1) \gset
SELECT is(cyclone_test.slots('l'), 1, 'the claimed step holds the one slot');
SELECT is(cyclone_test.claim_count(10), 0, 'the other step is held back');
SELECT cyclone.cancel(:'run');
SELECT is(cyclone_test.slots('l'), 0, 'the slot is given back');
SELECT is(cyclone_test.claim_count(10, 'w2'), 1, 'the next claim takes the freed slot');

SELECT * FROM finish();
ROLLBACK;
