-- SPEC 12: a claim never takes a step into a bucket that already has
-- p_concurrency running steps; held-back steps stay available, uncharged.
BEGIN;
SELECT plan(6);

SELECT cyclone.define_limit('l', 2);
SELECT cyclone_test.limited('lw', '[{"name": "l"}]');
SELECT cyclone.submit('lw') FROM generate_series(1, 5);
SELECT is(cyclone_test.claim_count(10), 2, 'a claim of 10 takes 2');
SELECT is(cyclone_test.claim_count(10), 0, 'the next claim takes none');
SELECT is(cyclone_test.slots('l'), 2, 'the bucket holds 2 slots');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'available' AND attempt = 0), 3,
          'the 3 others stay available, with no attempt charged');
SELECT cyclone.complete(id, 'w1', lease_generation) FROM cyclone.cyclone_steps WHERE state = 'running' LIMIT 1;
SELECT is(cyclone_test.claim_count(10), 1, 'one completion frees one slot');
SELECT is(cyclone_test.slots('l'), 2, 'back at 2');

SELECT * FROM finish();
ROLLBACK;
