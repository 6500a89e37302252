-- retry_all with nothing discarded returns 0, writes no audit row and leaves a
-- running or completed run as it is.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('idle', 1) AS wf \gset
SELECT cyclone.submit('idle') AS done \gset
SELECT ok(cyclone_test.run_node(:'done', 'work', '"ok"'), 'one run completes');
SELECT cyclone.submit('idle') AS live \gset

SELECT is(cyclone.retry_all(:'live', 'nothing to do'), 0, 'a running run with no discards: 0');
SELECT is(cyclone_test.state(:'live'), 'available', 'its step is untouched');
SELECT is(cyclone.retry_all(:'done'), 0, 'a completed run with no discards: 0');
SELECT results_eq(format('SELECT state, output FROM cyclone.cyclone_runs WHERE id = %L', :'done'),
                  $$VALUES ('completed'::text, '{"work": "ok"}'::jsonb)$$, 'the completed run stays completed');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_audit WHERE run_id IN (:'live', :'done')), 0, 'no audit row');
SELECT throws_ok($$SELECT cyclone.retry_all(gen_random_uuid())$$, 'P0002', NULL, 'unknown run: P0002');

SELECT * FROM finish();
ROLLBACK;
