-- A discard whose dependent is on fail_run (the default) fails the run and, in
-- the same transaction, cancels every non-terminal step: a running sibling loses
-- its lease (renew and complete return false, fail returns NULL).
BEGIN;
SELECT plan(15);

SELECT cyclone_test.define('ff', '[{"name":"a"},{"name":"sib"},{"name":"idle"},{"name":"done"},
                                   {"name":"b","deps":["a"]},{"name":"c","deps":["b"]}]') AS wf \gset
SELECT cyclone.submit('ff') AS run \gset

SELECT ok(cyclone_test.run_node(:'run', 'done', '"kept"'), 'done completes before the failure');
SELECT * FROM cyclone_test.claim_node(:'run', 'sib', 'w2') \gset s_
SELECT cyclone.advance_time('3 seconds') AS t1 \gset
SELECT is(cyclone_test.fail_node(:'run', 'a', 'permanent'), 'discarded', 'a fails permanently');

SELECT results_eq(format('SELECT state, finished_at FROM cyclone.cyclone_runs WHERE id = %L', :'run'),
                  format('VALUES (%L::text, %L::timestamptz)', 'failed', :'t1'),
                  'the run is failed, finished at the discard');
SELECT results_eq(
    format($$SELECT node, state, error_kind, error, finished_at FROM cyclone.cyclone_steps
              WHERE run_id = %L AND node IN ('sib', 'idle', 'b', 'c') ORDER BY node$$, :'run'),
    format($$VALUES ('b'::text, 'cancelled'::text, 'cancelled'::text, 'run failed'::text, %1$L::timestamptz),
                    ('c', 'cancelled', 'cancelled', 'run failed', %1$L),
                    ('idle', 'cancelled', 'cancelled', 'run failed', %1$L),
                    ('sib', 'cancelled', 'cancelled', 'run failed', %1$L)$$, :'t1'),
    'every live step (running, available, pending) is cancelled with error "run failed"');
SELECT is(cyclone_test.state(:'run', 'done'), 'completed', 'a completed step is left alone');
SELECT is((cyclone_test.step(:'run', 'done')).output, '"kept"'::jsonb, 'and keeps its output');
SELECT is(cyclone_test.state(:'run', 'a'), 'discarded', 'a is discarded');
SELECT is((cyclone_test.step(:'run', 'sib')).lease_owner, NULL, 'the cancelled sibling lost its lease');
SELECT results_eq(format('SELECT error_kind, error FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('permanent'::text, 'boom'::text)$$, 'get_run reports a''s failure');
SELECT is_empty($$SELECT * FROM cyclone.claim('w3', NULL, 10)$$, 'nothing of the failed run is claimable');

-- The sibling's worker comes back.
SELECT ok(NOT cyclone.renew(:s_step_id, 'w2', :s_lease_generation), 'renew of the cancelled sibling returns false');
SELECT ok(NOT cyclone.complete(:s_step_id, 'w2', :s_lease_generation, '"late"'), 'its late complete returns false');
SELECT is(cyclone.fail(:s_step_id, 'w2', :s_lease_generation, 'late'), NULL, 'its late fail returns NULL');
SELECT results_eq(format($$SELECT state, output, error FROM cyclone.cyclone_steps WHERE id = %s$$, :s_step_id),
                  $$VALUES ('cancelled'::text, NULL::jsonb, 'run failed'::text)$$, 'the late results changed nothing');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run stays failed');

SELECT * FROM finish();
ROLLBACK;
