-- The run_state_valid CHECK makes a run in a state SPEC does not name unstorable.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one');
CREATE TEMP TABLE t AS SELECT cyclone.submit('one') AS run_id;

SELECT throws_ok(
    format($$UPDATE cyclone.cyclone_runs SET state = 'done' WHERE id = %L$$, (SELECT run_id FROM t)),
    '23514', NULL, 'a run cannot be in state "done"');
SELECT throws_ok(
    format($$UPDATE cyclone.cyclone_runs SET state = 'completed' WHERE id = %L$$, (SELECT run_id FROM t)),
    '23514', NULL, 'a terminal run must have finished_at');
SELECT is(cyclone_test.run_state((SELECT run_id FROM t)), 'running', 'the run is still running');

SELECT * FROM finish();
ROLLBACK;
