-- SPEC 18: a result that arrives once the step's timeout has passed (started_at + timeout <= now) is refused
-- by complete and complete_many, as renew refuses it, before any sweep; one that arrives after the lease
-- expired but before a sweep reclaimed the step is still accepted.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('slow', 3, '10 seconds') AS wf \gset
SELECT cyclone.submit('slow') AS a \gset
SELECT cyclone.submit('slow') AS b \gset
SELECT count(*) AS claimed FROM cyclone.claim('w1', NULL, 10, '60 seconds') \gset
SELECT id AS sa, lease_generation AS ga FROM cyclone.cyclone_steps WHERE run_id = :'a' \gset
SELECT id AS sb, lease_generation AS gb FROM cyclone.cyclone_steps WHERE run_id = :'b' \gset

SELECT cyclone.advance_time('10 seconds');
SELECT is(cyclone.complete(:sa, 'w1', :ga, '{"late": true}'), false, 'complete at started_at + timeout: refused');
SELECT is(accepted, false, 'complete_many: refused too')
  FROM cyclone.complete_many('w1', ARRAY[:sb]::bigint[], ARRAY[:gb]::bigint[], ARRAY['{}'::jsonb]);
SELECT is(cyclone_test.state(:'a'), 'running', 'nothing changed: the sweep decides the timeout');
SELECT is((cyclone_test.step(:'b')).output, NULL, 'no output stored');

-- Without a timeout, a lease that expired but was not reclaimed yet still takes the result.
SELECT cyclone_test.one_step('plain') AS wf2 \gset
SELECT cyclone.submit('plain') AS c \gset
SELECT step_id AS sc, lease_generation AS gc FROM cyclone_test.claim_node(:'c', 'work', 'w1', '5 seconds') \gset
SELECT cyclone.advance_time('1 minute');
SELECT is(cyclone.complete(:sc, 'w1', :gc, '{"ok": 1}'), true, 'an expired lease nobody reclaimed: accepted');
SELECT is(cyclone_test.run_state(:'c'), 'completed', 'and the run completes');

-- Within the timeout: accepted.
SELECT cyclone.submit('slow') AS d \gset
SELECT step_id AS sd, lease_generation AS gd FROM cyclone_test.claim_node(:'d', 'work', 'w1', '60 seconds') \gset
SELECT cyclone.advance_time('9.999 seconds');
SELECT is(cyclone.complete(:sd, 'w1', :gd, '{}'), true, '1 ms before the timeout: accepted');

SELECT * FROM finish();
ROLLBACK;
