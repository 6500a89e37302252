-- SPEC 12 (concurrency, exact under any number of workers): a bucket's slots,
-- held (cyclone_slots) and free (cyclone_free_slots), never outnumber its
-- concurrency, so no claim can take more; a batch completion gives back every
-- slot of its batch in the same statement.
BEGIN;
SELECT plan(6);

CREATE FUNCTION pg_temp.slots_of(p_limit text) RETURNS int LANGUAGE sql AS $$
    SELECT ((SELECT count(*) FROM cyclone.cyclone_slots x JOIN cyclone.cyclone_buckets b ON b.id = x.bucket_id
              WHERE b.limit_name = p_limit)
          + (SELECT count(*) FROM cyclone.cyclone_free_slots f JOIN cyclone.cyclone_buckets b ON b.id = f.bucket_id
              WHERE b.limit_name = p_limit))::int
$$;

SELECT cyclone.define_limit('l', 3);
SELECT cyclone_test.limited('lw', '[{"name": "l"}]');
SELECT cyclone.submit('lw') FROM generate_series(1, 10);

SELECT is(cyclone_test.claim_count(2), 2, 'a claim of 2 adds 2 slots');
SELECT is(cyclone_test.claim_count(10), 1, 'a claim of 10 gets the one slot left');
SELECT is(pg_temp.slots_of('l'), 3, 'held and free slots: 3, the concurrency');

SELECT is((SELECT count(*)::int FROM cyclone.complete_many('w1',
              ARRAY(SELECT id FROM cyclone.cyclone_steps WHERE state = 'running' ORDER BY id),
              ARRAY(SELECT lease_generation FROM cyclone.cyclone_steps WHERE state = 'running' ORDER BY id),
              array_fill('{}'::jsonb, ARRAY[3])) WHERE accepted), 3, 'one complete_many of 3');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_free_slots), 3, 'gives back all 3 slots as free ones');

SELECT cyclone_test.claim_count(1);
SELECT cyclone.fail(id, 'w1', lease_generation, 'boom', 'error', '0 seconds')
  FROM cyclone.cyclone_steps WHERE state = 'running';
SELECT cyclone_test.claim_count(10);
SELECT is(pg_temp.slots_of('l'), 3, 'after a failure and more claims: still 3 slots');

SELECT * FROM finish();
ROLLBACK;
