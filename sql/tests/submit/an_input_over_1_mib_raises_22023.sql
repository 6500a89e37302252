-- Inputs are capped at 1 MiB (every step keeps a copy): a bigger one raises 22023
-- and writes nothing; one just under the cap is accepted.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one');
-- md5 text does not compress, so pg_column_size is close to the raw length.
CREATE TEMP TABLE big AS
SELECT jsonb_build_object('blob', string_agg(md5(i::text), '')) AS huge,
       jsonb_build_object('blob', string_agg(md5(i::text), '') FILTER (WHERE i <= 30000)) AS fine
  FROM generate_series(1, 40000) i;

SELECT throws_ok($$SELECT cyclone.submit('one', (SELECT huge FROM big))$$, '22023', NULL, 'a ~1.3 MB input raises 22023');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');
SELECT lives_ok($$SELECT cyclone.submit('one', (SELECT fine FROM big))$$, 'a ~1 MB input (under 1 MiB) is accepted');

SELECT * FROM finish();
ROLLBACK;
