-- complete_many clears error/error_kind like complete does.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('flaky');
SELECT cyclone.submit('flaky') AS run_id \gset
SELECT is(cyclone_test.fail_node(:'run_id', 'work', 'panic', interval '0'), 'available', 'the first attempt fails');
SELECT step_id, lease_generation FROM cyclone_test.claim_node(:'run_id', 'work') \gset
SELECT is((SELECT accepted FROM cyclone.complete_many('w1', ARRAY[:step_id]::bigint[],
          ARRAY[:lease_generation]::bigint[], ARRAY['{}'::jsonb])), true, 'the second attempt is accepted');
SELECT is((SELECT row(s.error, s.error_kind)::text FROM cyclone.cyclone_steps s WHERE s.id = :step_id),
          row(NULL::text, NULL::text)::text, 'error and error_kind are cleared on completion');

SELECT * FROM finish();
ROLLBACK;
