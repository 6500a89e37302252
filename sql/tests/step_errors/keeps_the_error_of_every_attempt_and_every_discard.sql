-- cyclone_step_errors keeps every error a step was given: each retried failure
-- (fail, a sweep timeout) and each discard (by fail, reclaim limit, deadline,
-- max_wait), with the attempt and the worker; an operator retry that clears
-- the step's error keeps the history. Cancellations are not errors.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('one', 3, '10 seconds') AS wf \gset
SELECT cyclone.submit('one') AS run \gset

SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1') \gset
SELECT cyclone.fail(:step_id, 'w1', :gen, 'first boom', 'error', '0 seconds');
SELECT lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w2') \gset
SELECT cyclone.advance_time('11 seconds');
SELECT cyclone.sweep();                                                   -- attempt 2 times out
SELECT cyclone.advance_time('1 hour');
SELECT lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w3') \gset
SELECT cyclone.fail(:step_id, 'w3', :gen, 'last boom', 'error');          -- attempt 3: discarded

SELECT results_eq(
    format($$SELECT attempt, error_kind, error, worker, discarded FROM cyclone.cyclone_step_errors
              WHERE step_id = %s ORDER BY id$$, :step_id),
    $$VALUES (1, 'error'::text, 'first boom'::text, 'w1'::text, false),
             (2, 'timeout', 'step timed out after 00:00:10', 'w2', false),
             (3, 'error', 'last boom', 'w3', true)$$,
    'two retried failures and the discard, each with its attempt and worker');

SELECT cyclone.retry(:'run', 'work', 1, 'try once more');
SELECT is((cyclone_test.step(:'run')).error, NULL, 'the operator retry cleared the step''s error');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_step_errors WHERE step_id = :step_id), 3,
          'the history is kept across the retry');

-- A deadline discards; the steps it only cancels leave no error row.
SELECT cyclone_test.define('two', '[{"name":"a"},{"name":"b","deps":["a"]}]') AS wf2 \gset
SELECT cyclone.submit('two', '{}', interval '1 minute') AS run2 \gset
SELECT cyclone.advance_time('2 minutes');
SELECT cyclone.enforce_deadlines();
SELECT results_eq(format($$SELECT node, error_kind, discarded, worker FROM cyclone.cyclone_step_errors
                            WHERE run_id = %L ORDER BY id$$, :'run2'),
                  $$VALUES ('a'::text, 'deadline'::text, true, NULL::text)$$,
                  'a deadline: the discarded step only (b was cancelled)');

-- A wait node past max_wait.
SELECT cyclone_test.define('gate', '[{"name":"g","kind":"wait","max_wait":"1 minute"}]') AS wf3 \gset
SELECT cyclone.submit('gate') AS run3 \gset
SELECT cyclone.advance_time('2 minutes');
SELECT cyclone.tick();
SELECT is((SELECT error_kind FROM cyclone.cyclone_step_errors WHERE run_id = :'run3'), 'max_wait', 'max_wait');

-- Reclaim limit.
SELECT cyclone_test.define('rc', '[{"name":"work","handler":"rc"}]') AS wf4 \gset
SELECT cyclone.submit('rc') AS run4 \gset
SELECT lease_generation AS gen FROM cyclone_test.claim_node(:'run4', 'work', 'w9', '1 second') \gset
SELECT cyclone.advance_time('2 seconds');
SELECT cyclone.sweep(1);
SELECT lease_generation AS gen FROM cyclone_test.claim_node(:'run4', 'work', 'w9', '1 second') \gset
SELECT cyclone.advance_time('2 seconds');
SELECT cyclone.sweep(1);
SELECT results_eq(format($$SELECT error_kind, worker, discarded FROM cyclone.cyclone_step_errors WHERE run_id = %L$$, :'run4'),
                  $$VALUES ('reclaim_limit'::text, 'w9'::text, true)$$, 'a reclaim is no error; the reclaim limit is');

SELECT cyclone.cancel(:'run4');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_step_errors WHERE run_id = :'run4'), 1, 'a cancel adds nothing');
SELECT cyclone.advance_time('1 second');
SELECT cyclone.prune('0 seconds');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_step_errors WHERE run_id = :'run4'), 0, 'prune takes the history with the run');

SELECT * FROM finish();
ROLLBACK;
