BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset

SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', ARRAY[%s]::bigint[], ARRAY[%s, 9]::bigint[], ARRAY['1']::jsonb[])$$, :step_id, :gen),
                 '22023', NULL, 'more generations than step ids raises 22023');
SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', ARRAY[%s]::bigint[], ARRAY[%s]::bigint[], ARRAY['1', '2']::jsonb[])$$, :step_id, :gen),
                 '22023', NULL, 'more outputs than step ids raises 22023');
SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', ARRAY[%s]::bigint[], ARRAY[]::bigint[], ARRAY['1']::jsonb[])$$, :step_id),
                 '22023', NULL, 'an empty generation array raises 22023');
-- Elements pair by position: arrays of equal length but different lower bounds
-- would pair a step with another element's generation and output.
SELECT throws_ok(format($$SELECT * FROM cyclone.complete_many('w1', '[0:0]={%s}'::bigint[], ARRAY[%s]::bigint[], ARRAY['1']::jsonb[])$$, :step_id, :gen),
                 '22023', NULL, 'arrays with different lower bounds raise 22023');
SELECT is(cyclone_test.state(:'run'), 'running', 'nothing was completed');

SELECT * FROM finish();
ROLLBACK;
