-- SPEC 12: changing a limit applies to the next claim; lowering p_concurrency
-- below the running count stops new claims and cancels nothing.
BEGIN;
SELECT plan(4);

SELECT cyclone.define_limit('l', 4);
SELECT cyclone_test.limited('lw', '[{"name": "l"}]');
SELECT cyclone.submit('lw') FROM generate_series(1, 8);
SELECT is(cyclone_test.claim_count(10), 4, '4 running');
SELECT cyclone.define_limit('l', 2);
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'running'), 4, 'lowered to 2: all 4 still run');
SELECT cyclone.complete(id, 'w1', lease_generation) FROM cyclone.cyclone_steps WHERE state = 'running' ORDER BY id LIMIT 2;
SELECT is(cyclone_test.claim_count(10), 0, 'two completions leave 2 running: no room under 2');
SELECT cyclone.complete(id, 'w1', lease_generation) FROM cyclone.cyclone_steps WHERE state = 'running' ORDER BY id LIMIT 1;
SELECT is(cyclone_test.claim_count(10), 1, 'one more completion: one claim');

SELECT * FROM finish();
ROLLBACK;
