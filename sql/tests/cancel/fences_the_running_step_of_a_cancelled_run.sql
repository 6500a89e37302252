-- The worker of a step running when its run was cancelled finds its lease gone:
-- renew false, complete false, fail NULL, and none of them changes anything.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('fence', '[{"name":"a"},{"name":"b","deps":["a"]}]') AS wf \gset
SELECT cyclone.submit('fence') AS run \gset
SELECT * FROM cyclone_test.claim_node(:'run', 'a', 'w9') \gset a_
SELECT ok(cyclone.renew(:a_step_id, 'w9', :a_lease_generation), 'renew works before the cancel');

SELECT ok(cyclone.cancel(:'run'), 'the run is cancelled');
SELECT ok(NOT cyclone.renew(:a_step_id, 'w9', :a_lease_generation), 'renew returns false: cancel the handler');
SELECT ok(NOT cyclone.complete(:a_step_id, 'w9', :a_lease_generation, '"late"'), 'a late complete returns false');
SELECT is(cyclone.fail(:a_step_id, 'w9', :a_lease_generation, 'late', 'permanent'), NULL, 'a late fail returns NULL');
SELECT results_eq(format('SELECT node, state, output, error FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node', :'run'),
                  $$VALUES ('a'::text, 'cancelled'::text, NULL::jsonb, 'run cancelled'::text),
                           ('b', 'cancelled', NULL, 'run cancelled')$$,
                  'the late results did not complete a, reach b or discard anything');
SELECT is(cyclone_test.run_state(:'run'), 'cancelled', 'the run stays cancelled');

SELECT * FROM finish();
ROLLBACK;
