-- The product notes' query "every step killed by a run deadline" works verbatim
-- with search_path = cyclone, public: deadline victims only, newest first.
BEGIN;
SELECT plan(2);

SET LOCAL search_path = cyclone, public;

-- One reached step per run ("a"); "c" is pending and gets cancelled, not dead-lettered.
SELECT cyclone_test.define('dq', '[{"name": "a"}, {"name": "c", "deps": ["a"]}]') \gset
SELECT cyclone_test.one_step('dq_plain', 1) \gset
SELECT cyclone.submit('dq', '{}', '10 minutes') AS early \gset
SELECT cyclone.submit('dq', '{}', '20 minutes') AS late \gset
SELECT cyclone.submit('dq', '{}', '1 day') AS alive \gset
-- claim_node takes every claimable step of the handler: one plain run at a time.
SELECT cyclone.submit('dq_plain', '{}', '10 minutes') AS errored \gset
SELECT cyclone_test.fail_node(:'errored', 'work', 'permanent') \gset
SELECT cyclone.submit('dq_plain', '{}', '10 minutes') AS done \gset
SELECT cyclone_test.run_node(:'done', 'work') \gset

SELECT cyclone.advance_time('11 minutes') AS t_early \gset
SELECT cyclone.enforce_deadlines() \gset
SELECT cyclone.advance_time('10 minutes') AS t_late \gset
SELECT cyclone.enforce_deadlines() \gset

SELECT results_eq(
    $$SELECT run_id, node, kind, error, completed_at
  FROM cyclone_v_steps
 WHERE error_kind = 'deadline'
 ORDER BY completed_at DESC;$$,
    format($$VALUES (%L::uuid, 'a', 'task', 'run deadline exceeded', %L::timestamptz),
                    (%L::uuid, 'a', 'task', 'run deadline exceeded', %L::timestamptz)$$,
           :'late', :'t_late', :'early', :'t_early'),
    'every step killed by a run deadline, newest first');
SELECT is((SELECT count(*)::int FROM cyclone_v_steps WHERE error = 'run deadline exceeded'), 4,
          'the cancelled pending steps share the error text but not the error kind');

SELECT * FROM finish();
ROLLBACK;
