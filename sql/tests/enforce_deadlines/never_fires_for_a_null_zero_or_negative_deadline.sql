-- A NULL, zero or negative deadline means no deadline: deadline_at is NULL and
-- enforce_deadlines() never touches the run, however much time passes.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('nodl') \gset
SELECT cyclone.submit('nodl', '{}', NULL) AS r_null \gset
SELECT cyclone.submit('nodl', '{}', '0 seconds') AS r_zero \gset
SELECT cyclone.submit('nodl', '{}', '-5 minutes') AS r_neg \gset
SELECT cyclone.submit('nodl') AS r_default \gset

SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs
            WHERE id IN (:'r_null', :'r_zero', :'r_neg', :'r_default') AND deadline_at IS NULL), 4,
          'NULL, zero, negative and omitted deadlines all store deadline_at NULL');
SELECT is((cyclone.get_run(:'r_neg')).deadline_at, NULL, 'get_run reports no deadline');

SELECT cyclone.advance_time('3650 days') \gset
SELECT is_empty($$SELECT cyclone.enforce_deadlines()$$, 'ten years later enforce_deadlines fails nothing');
SELECT is(cyclone_test.run_state(:'r_null'), 'running', 'the NULL-deadline run is still running');
SELECT is(cyclone_test.run_state(:'r_zero'), 'running', 'the zero-deadline run is still running');
SELECT is(cyclone_test.run_state(:'r_neg'), 'running', 'the negative-deadline run is still running');
SELECT is((cyclone.tick())->'deadlines', '0'::jsonb, 'tick counts no deadlines either');

SELECT * FROM finish();
ROLLBACK;
