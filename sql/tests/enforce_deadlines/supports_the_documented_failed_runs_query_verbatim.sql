-- The product notes' query "runs killed by a deadline" (a DISTINCT join of
-- cyclone_runs and cyclone_steps) works verbatim with search_path = cyclone,
-- public: one row per run even when several of its steps were dead-lettered.
BEGIN;
SELECT plan(2);

SET LOCAL search_path = cyclone, public;

SELECT cyclone_test.define('dr', '[{"name": "a"}, {"name": "b"}, {"name": "w", "kind": "wait"},
                                   {"name": "c", "deps": ["a", "b"]}]') \gset
SELECT cyclone_test.one_step('dr_plain', 1) \gset
SELECT cyclone.submit('dr', '{}', '10 minutes') AS early \gset
SELECT cyclone.submit('dr', '{}', '20 minutes') AS late \gset
SELECT cyclone.submit('dr_plain', '{}', '10 minutes') AS errored \gset
SELECT cyclone.submit('dr', '{}', '1 day') AS alive \gset
SELECT cyclone_test.fail_node(:'errored', 'work', 'permanent') \gset

SELECT cyclone.advance_time('11 minutes') AS t_early \gset
SELECT cyclone.enforce_deadlines() \gset
SELECT cyclone.advance_time('10 minutes') AS t_late \gset
SELECT cyclone.enforce_deadlines() \gset

SELECT is((SELECT count(*)::int FROM cyclone_steps WHERE error_kind = 'deadline'), 6,
          'three dead letters in each deadline-failed run');
SELECT results_eq(
    $$SELECT DISTINCT r.id, r.workflow, r.finished_at
  FROM cyclone_runs r
  JOIN cyclone_steps s ON s.run_id = r.id
 WHERE s.error_kind = 'deadline'
 ORDER BY r.finished_at DESC;$$,
    format($$VALUES (%L::uuid, 'dr', %L::timestamptz), (%L::uuid, 'dr', %L::timestamptz)$$,
           :'late', :'t_late', :'early', :'t_early'),
    'one row per deadline-failed run, newest first');

SELECT * FROM finish();
ROLLBACK;
