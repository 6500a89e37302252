-- SPEC 18: fail, like complete, refuses (NULL) a report that arrives once the step's timeout has passed;
-- the sweep then times the step out (kind timeout).
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('slow', 3, '10 seconds') AS wf \gset
SELECT cyclone.submit('slow') AS a \gset
SELECT step_id AS sa, lease_generation AS ga FROM cyclone_test.claim_node(:'a', 'work', 'w1', '60 seconds') \gset

SELECT cyclone.advance_time('10 seconds');
SELECT is(cyclone.fail(:sa, 'w1', :ga, 'boom', 'error'), NULL, 'fail at started_at + timeout: NULL');
SELECT is((cyclone_test.step(:'a')).attempt, 1, 'no attempt recorded by it');
SELECT is(count(*), 0::bigint, 'no error kept') FROM cyclone.cyclone_step_errors WHERE step_id = :sa;
SELECT cyclone.advance_time('1 millisecond');  -- the sweep acts once the timeout has passed strictly
SELECT is(action, 'retried', 'the sweep times it out') FROM cyclone.sweep(0) WHERE step_id = :sa;

SELECT * FROM finish();
ROLLBACK;
