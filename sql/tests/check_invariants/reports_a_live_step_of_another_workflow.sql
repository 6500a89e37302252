-- A live step carries its run's workflow (step_workflow.sql); one planted with
-- another is reported, a finished one is not read (only live steps are).
BEGIN;
SELECT plan(3);

SELECT cyclone_test.define('pair', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]');
SELECT cyclone_test.one_step('other');
SELECT cyclone.submit('pair') AS run \gset
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'consistent to begin with');

SAVEPOINT s;
UPDATE cyclone.cyclone_steps SET workflow = 'other' WHERE run_id = :'run' AND node = 'b';
SELECT results_eq($$SELECT invariant, detail ->> 'step_workflow', detail ->> 'run_workflow'
                      FROM cyclone.check_invariants()$$,
                  $$VALUES ('step_of_another_workflow', 'other', 'pair')$$, 'a pending step of another workflow');
ROLLBACK TO SAVEPOINT s;

SELECT cyclone.cancel(:'run');
UPDATE cyclone.cyclone_steps SET workflow = 'other' WHERE run_id = :'run';
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'finished steps are not read');

SELECT * FROM finish();
ROLLBACK;
