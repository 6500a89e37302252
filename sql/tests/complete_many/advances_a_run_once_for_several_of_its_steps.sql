-- Two dependencies of one join completed in one batch: the join is reached
-- once, and an empty batch is a no-op.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('join', '[{"name":"a"},{"name":"b"},{"name":"c","deps":["a","b"]}]') AS wf \gset
SELECT cyclone.submit('join') AS run \gset
SELECT step_id AS sa, lease_generation AS ga FROM cyclone_test.claim_node(:'run', 'a') \gset
SELECT step_id AS sb, lease_generation AS gb FROM cyclone_test.claim_node(:'run', 'b') \gset

SELECT is_empty($$SELECT * FROM cyclone.complete_many('w1', '{}', '{}', '{}')$$, 'an empty batch returns no rows');
SELECT results_eq(
    format($$SELECT accepted FROM cyclone.complete_many('w1', ARRAY[%s, %s]::bigint[], ARRAY[%s, %s]::bigint[], ARRAY['"A"', '"B"']::jsonb[])$$,
           :sa, :sb, :ga, :gb),
    $$VALUES (true), (true)$$, 'both are accepted');
SELECT is(cyclone_test.state(:'run', 'c'), 'available', 'the join is available');
SELECT results_eq($$SELECT node, deps FROM cyclone.claim('w2', NULL, 10)$$,
                  $$VALUES ('c'::text, '{"a": "A", "b": "B"}'::jsonb)$$, 'the join is claimed once with both outputs');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run runs on');

SELECT * FROM finish();
ROLLBACK;
