-- Without foreign keys on the hot tables (hot_path_keys, issue #32), check_invariants() reports a live step
-- whose run is not live and a live run of a workflow that is not defined.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone.submit('solo') AS run \gset
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'consistent to begin with');

SAVEPOINT s;
DELETE FROM ONLY cyclone.cyclone_runs WHERE id = :'run';
SELECT results_eq('SELECT invariant, detail ->> ''run_id'' FROM cyclone.check_invariants()',
                  format('VALUES (''step_without_run'', %L)', :'run'), 'a step without its run');
ROLLBACK TO SAVEPOINT s;

UPDATE cyclone.cyclone_runs SET workflow = 'nobody' WHERE id = :'run';
UPDATE cyclone.cyclone_steps SET workflow = 'nobody' WHERE run_id = :'run';
SELECT results_eq('SELECT invariant, detail ->> ''workflow'' FROM cyclone.check_invariants()',
                  $$VALUES ('run_of_unknown_workflow', 'nobody')$$, 'a run of an unknown workflow');

SELECT * FROM finish();
ROLLBACK;
