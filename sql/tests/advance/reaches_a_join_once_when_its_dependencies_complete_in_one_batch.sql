-- complete_many finishing both dependencies of a join at once reaches it once.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('join2', '[{"name":"b"},{"name":"c"},{"name":"d","deps":["b","c"]}]') AS wf \gset
SELECT cyclone.submit('join2') AS run \gset

SELECT * FROM cyclone_test.claim_node(:'run', 'b') \gset b_
SELECT * FROM cyclone_test.claim_node(:'run', 'c') \gset c_
SELECT results_eq(
    format('SELECT accepted FROM cyclone.complete_many(%L, ARRAY[%s, %s]::bigint[], ARRAY[%s, %s]::bigint[], ARRAY[%L, %L]::jsonb[])',
           'w1', :b_step_id, :c_step_id, :b_lease_generation, :c_lease_generation, '1', '2'),
    $$VALUES (true), (true)$$, 'both completions are accepted');
SELECT is(cyclone_test.state(:'run', 'd'), 'available', 'd is available after the batch');
SELECT results_eq($$SELECT node, deps FROM cyclone.claim('w2', NULL, 10)$$,
                  $$VALUES ('d'::text, '{"b": 1, "c": 2}'::jsonb)$$, 'd is claimed once, with both outputs');
SELECT is((cyclone_test.step(:'run', 'd')).lease_generation, 1::bigint, 'd was leased exactly once');
SELECT is_empty($$SELECT * FROM cyclone.claim('w3', NULL, 10)$$, 'no second copy of d is claimable');

SELECT * FROM finish();
ROLLBACK;
