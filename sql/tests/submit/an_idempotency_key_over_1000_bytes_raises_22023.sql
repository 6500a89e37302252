-- Issue 30, finding 11: an idempotency key of about 8 KB (incompressible) failed with PostgreSQL's own
-- btree error (54000, "index row size exceeds maximum"), naming nothing. A key is at most 1,000 bytes
-- (a btree entry holds about 2,700, with the workflow's name beside it): a longer one raises 22023 naming
-- p_idempotency_key and writes nothing. Bytes: 334 three-byte characters are over.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one');
-- 8,000 bytes of md5 hex: what the btree refused.
CREATE TEMP TABLE k AS SELECT string_agg(md5(i::text), '') AS key FROM generate_series(1, 250) i;

SELECT throws_ok($$SELECT cyclone.submit('one', '{}', NULL, (SELECT key FROM k))$$, '22023',
                 'submit: p_idempotency_key is 8000 bytes long; the limit is 1000 bytes',
                 'an 8,000-byte key raises 22023 naming p_idempotency_key');
SELECT throws_ok($$SELECT cyclone.submit('one', '{}', NULL, repeat('k', 1001))$$, '22023', NULL,
                 '1,001 bytes raise 22023');
SELECT throws_ok($$SELECT cyclone.submit('one', '{}', NULL, repeat('€', 334))$$, '22023', NULL,
                 '334 characters of three bytes each (1,002 bytes) raise 22023');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');
SELECT lives_ok($$SELECT cyclone.submit('one', '{}', NULL, left((SELECT key FROM k), 1000))$$,
                'a key of 1,000 bytes is accepted');
SELECT is(cyclone.submit('one', '{}', NULL, left((SELECT key FROM k), 1000)),
          (SELECT id FROM cyclone.cyclone_runs), 'and deduplicates as any key does');

SELECT * FROM finish();
ROLLBACK;
