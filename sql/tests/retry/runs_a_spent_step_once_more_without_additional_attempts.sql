-- The default (0 additional attempts) still gives the step one more execution:
-- max_attempts stays, the next claim is attempt + 1, and its failure discards.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('once', 1) AS wf \gset
SELECT cyclone.submit('once') AS run \gset
SELECT is(cyclone_test.fail_node(:'run', 'work'), 'discarded', 'the only attempt is discarded');

SELECT lives_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'work'), 'retry with the defaults');
SELECT is((cyclone_test.step(:'run')).max_attempts, 1, 'max_attempts is unchanged');
SELECT * FROM cyclone_test.claim_node(:'run') \gset c_
SELECT is(:c_attempt, 2, 'the retried execution is attempt 2');
SELECT is(cyclone.fail(:c_step_id, 'w1', :c_lease_generation, 'still broken'), 'discarded',
          'its failure discards it again');

SELECT * FROM finish();
ROLLBACK;
