-- Each element is its own CAS: a stale generation and another worker's lease
-- are refused, the others accepted; the answer follows the input order.
BEGIN;
SELECT plan(11);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS r1 \gset
SELECT cyclone.submit('one') AS r2 \gset
SELECT cyclone.submit('one') AS r3 \gset
SELECT cyclone.submit('one') AS r4 \gset
SELECT step_id AS s1, lease_generation AS g1 FROM cyclone.claim('w1') \gset
SELECT step_id AS s2, lease_generation AS g2 FROM cyclone.claim('w1') \gset
SELECT step_id AS s3, lease_generation AS g3 FROM cyclone.claim('w2') \gset
SELECT step_id AS s4, lease_generation AS g4 FROM cyclone.claim('w1') \gset

SELECT is(ARRAY[(cyclone_test.step(:'r1')).id, (cyclone_test.step(:'r2')).id, (cyclone_test.step(:'r3')).id,
                (cyclone_test.step(:'r4')).id], ARRAY[:s1, :s2, :s3, :s4]::bigint[], 'sanity: claims took r1..r4 in order');
SELECT results_eq(
    format($$SELECT step_id, accepted FROM cyclone.complete_many('w1', ARRAY[%s, %s, %s, %s]::bigint[],
                ARRAY[%s, %s, %s, %s]::bigint[], ARRAY['"one"', '"two"', '"three"', '"four"']::jsonb[])$$,
           :s4, :s2, :s3, :s1, :g4, :g2 + 1, :g3, :g1),
    format($$VALUES (%s::bigint, true), (%s::bigint, false), (%s::bigint, false), (%s::bigint, true)$$, :s4, :s2, :s3, :s1),
    'fresh elements are accepted, the stale generation and the foreign lease refused, in input order');

SELECT is(cyclone_test.state(:'r4'), 'completed', 'element 1 (fresh) is completed');
SELECT is((cyclone_test.step(:'r4')).output, '"one"'::jsonb, 'element 1 got its own output');
SELECT is(cyclone_test.state(:'r1'), 'completed', 'element 4 (fresh) is completed');
SELECT is((cyclone_test.step(:'r1')).output, '"four"'::jsonb, 'element 4 got its own output');
SELECT is(cyclone_test.state(:'r2'), 'running', 'the stale element is still running');
SELECT is((cyclone_test.step(:'r2')).output, NULL, 'and has no output');
SELECT ok(cyclone_test.state(:'r3') = 'running' AND (cyclone_test.step(:'r3')).lease_owner = 'w2',
          'the foreign lease is untouched');
SELECT is(ARRAY[cyclone_test.run_state(:'r4'), cyclone_test.run_state(:'r1')], ARRAY['completed', 'completed'],
          'the runs of accepted elements advanced to completed');
SELECT is(ARRAY[cyclone_test.run_state(:'r2'), cyclone_test.run_state(:'r3')], ARRAY['running', 'running'],
          'the runs of refused elements are still running');

SELECT * FROM finish();
ROLLBACK;
