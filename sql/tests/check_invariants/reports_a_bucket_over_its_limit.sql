-- A bucket holds at most concurrency + debt slots (held and free) and rate +
-- rate_debt tokens (limits.sql); one planted over either is reported, and a
-- lowered limit that owes is not.
BEGIN;
SELECT plan(5);

SELECT cyclone.define_limit('both', 2, 2, '1 hour');
SELECT cyclone_test.limited('bw', '[{"name": "both"}]');
SELECT cyclone.submit('bw') FROM generate_series(1, 4);
SELECT is(cyclone_test.claim_count(4), 2, 'two claimed: the bucket is full both ways');
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'consistent');

SAVEPOINT s;
INSERT INTO cyclone.cyclone_free_slots (bucket_id) SELECT id FROM cyclone.cyclone_buckets WHERE limit_name = 'both';
SELECT results_eq($$SELECT invariant, (detail ->> 'slots')::int FROM cyclone.check_invariants()$$,
                  $$VALUES ('bucket_over_its_limit', 3)$$, 'a third slot at concurrency 2');
ROLLBACK TO SAVEPOINT s;

INSERT INTO cyclone.cyclone_bucket_claims (bucket_id, at)
SELECT id, '-infinity' FROM cyclone.cyclone_buckets WHERE limit_name = 'both';
SELECT results_eq($$SELECT invariant, (detail ->> 'tokens')::int FROM cyclone.check_invariants()$$,
                  $$VALUES ('bucket_over_its_limit', 3)$$, 'a third token at rate 2');
ROLLBACK TO SAVEPOINT s;

SELECT cyclone.define_limit('both', 1, 1, '1 hour');
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'lowered to 1 and 1: over the new bounds by what it owes');

SELECT * FROM finish();
ROLLBACK;
