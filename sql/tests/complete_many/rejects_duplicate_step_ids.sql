BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset

SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', ARRAY[%s, %s]::bigint[], ARRAY[%s, %s]::bigint[], ARRAY['1', '2']::jsonb[])$$,
                        :step_id, :step_id, :gen, :gen),
                 '22023', NULL, 'a step id listed twice raises 22023');
SELECT is(cyclone_test.state(:'run'), 'running', 'the step was not completed');
SELECT is((cyclone_test.step(:'run')).output, NULL, 'and has no output');

SELECT * FROM finish();
ROLLBACK;
