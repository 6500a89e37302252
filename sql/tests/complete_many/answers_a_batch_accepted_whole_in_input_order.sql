-- A batch accepted whole is answered without looking each step up among the
-- accepted ones (complete_many counts them); the answer still names every
-- step once, in input order, each accepted.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS r1 \gset
SELECT cyclone.submit('one') AS r2 \gset
SELECT cyclone.submit('one') AS r3 \gset
SELECT step_id AS s1, lease_generation AS g1 FROM cyclone.claim('w1') \gset
SELECT step_id AS s2, lease_generation AS g2 FROM cyclone.claim('w1') \gset
SELECT step_id AS s3, lease_generation AS g3 FROM cyclone.claim('w1') \gset

SELECT results_eq(
    format($$SELECT step_id, accepted FROM cyclone.complete_many('w1', ARRAY[%s, %s, %s]::bigint[],
                ARRAY[%s, %s, %s]::bigint[], ARRAY['"c"', '"a"', '"b"']::jsonb[])$$,
           :s3, :s1, :s2, :g3, :g1, :g2),
    format($$VALUES (%s::bigint, true), (%s::bigint, true), (%s::bigint, true)$$, :s3, :s1, :s2),
    'every step accepted, answered in input order (not id order)');
SELECT is(ARRAY[(cyclone_test.step(:'r1')).output, (cyclone_test.step(:'r2')).output, (cyclone_test.step(:'r3')).output],
          ARRAY['"a"', '"b"', '"c"']::jsonb[], 'each step got its own output');

SELECT * FROM finish();
ROLLBACK;
