-- The parent's deadline applies to a waiting child node: it is discarded as
-- deadline and the child run is cancelled in the same transaction.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('kid') \gset
SELECT cyclone_test.define('mom', '[{"name": "c", "kind": "child", "workflow": "kid"},
                                    {"name": "b", "deps": ["c"]}]') \gset
SELECT cyclone.submit('mom', '{}', '30 minutes') AS run \gset
SELECT (cyclone_test.step(:'run', 'c')).child_run_id AS child \gset
SELECT step_id AS k_id, lease_generation AS k_gen FROM cyclone_test.claim_node(:'child', 'work', 'w1', '2 hours') \gset

SELECT cyclone.advance_time('31 minutes') \gset
SELECT results_eq($$SELECT cyclone.enforce_deadlines()$$, ARRAY[:'run'::uuid],
                  'only the parent is deadline-failed (the child has no deadline)');
SELECT results_eq(
    format($$SELECT node, state, error_kind, error FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node$$, :'run'),
    $$VALUES ('b', 'cancelled', 'cancelled', 'run deadline exceeded'),
             ('c', 'discarded', 'deadline', 'run deadline exceeded')$$,
    'the waiting child node is dead-lettered by the deadline');
SELECT results_eq(
    format($$SELECT state, finished_at FROM cyclone.cyclone_runs WHERE id = %L$$, :'child'),
    format($$VALUES ('cancelled', %L::timestamptz)$$, cyclone.now()),
    'the child run is cancelled now');
SELECT results_eq(
    format($$SELECT state, error_kind, error FROM cyclone.cyclone_steps WHERE run_id = %L$$, :'child'),
    $$VALUES ('cancelled', 'cancelled', 'run cancelled')$$,
    'the child''s running step is cancelled');
SELECT is(cyclone.complete(:k_id, 'w1', :k_gen, '{}'), false, 'the child handler''s late complete is refused');
SELECT is((cyclone.get_run(:'run')).error_kind, 'deadline', 'the parent reports the deadline, not child_failed');

SELECT * FROM finish();
ROLLBACK;
