-- SPEC 12: changing a limit applies to the next claim. A concurrency lowered
-- below the running count and raised again owes only the running steps above
-- the new value: claims resume as soon as the running count is below it.
BEGIN;
SELECT plan(5);

SELECT cyclone.define_limit('l', 4);
SELECT cyclone_test.limited('lw', '[{"name": "l"}]');
SELECT cyclone.submit('lw') FROM generate_series(1, 8);
SELECT is(cyclone_test.claim_count(10), 4, '4 running');
SELECT cyclone.define_limit('l', 1);
SELECT cyclone.define_limit('l', 3);
SELECT is(cyclone_test.claim_count(10), 0, 'lowered to 1, raised to 3: 4 running, no room');
SELECT cyclone.complete(id, 'w1', lease_generation) FROM cyclone.cyclone_steps WHERE state = 'running' ORDER BY id LIMIT 1;
SELECT is(cyclone_test.claim_count(10), 0, 'one completion leaves 3 running: no room under 3');
SELECT cyclone.complete(id, 'w1', lease_generation) FROM cyclone.cyclone_steps WHERE state = 'running' ORDER BY id LIMIT 1;
SELECT is(cyclone_test.claim_count(10), 1, 'one more: 2 running, one claim');
SELECT is(cyclone_test.slots('l'), 3, '3 slots held, the concurrency');

SELECT * FROM finish();
ROLLBACK;
