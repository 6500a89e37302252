BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset

SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many(NULL, ARRAY[%s]::bigint[], ARRAY[%s]::bigint[], ARRAY['1']::jsonb[])$$, :step_id, :gen),
                 '22004', NULL, 'a NULL worker raises 22004');
SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', NULL, ARRAY[%s]::bigint[], ARRAY['1']::jsonb[])$$, :gen),
                 '22004', NULL, 'a NULL step id array raises 22004');
SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', ARRAY[%s, NULL]::bigint[], ARRAY[%s, 1]::bigint[], ARRAY['1', '2']::jsonb[])$$, :step_id, :gen),
                 '22023', NULL, 'a NULL step id element raises 22023');
SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', ARRAY[%s]::bigint[], ARRAY[NULL]::bigint[], ARRAY['1']::jsonb[])$$, :step_id),
                 '22023', NULL, 'a NULL generation element raises 22023');
SELECT is(cyclone_test.state(:'run'), 'running', 'nothing was completed');

SELECT * FROM finish();
ROLLBACK;
