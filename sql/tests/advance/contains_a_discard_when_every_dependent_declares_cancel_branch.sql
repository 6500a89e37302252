-- cancel_branch: a discard whose dependents all declare it cancels those
-- dependents and all their descendants ('dependency discarded'); the other
-- branches go on and the run completes, with no error in get_run.
BEGIN;
SELECT plan(11);

SELECT cyclone_test.define('cb', '[{"name":"a"},
                                   {"name":"b","deps":["a"],"on_dep_failure":"cancel_branch"},
                                   {"name":"b2","deps":["a"],"on_dep_failure":"cancel_branch"},
                                   {"name":"c","deps":["b"]},
                                   {"name":"j","deps":["c","y"]},
                                   {"name":"x"},{"name":"y","deps":["x"]},{"name":"z","deps":["x"]}]') AS wf \gset
SELECT cyclone.submit('cb') AS run \gset

SELECT ok(cyclone_test.run_node(:'run', 'x', '"x"'), 'x completes');
SELECT * FROM cyclone_test.claim_node(:'run', 'z') \gset z_
SELECT cyclone.advance_time('1 second') AS t1 \gset
SELECT is(cyclone_test.fail_node(:'run', 'a', 'permanent'), 'discarded', 'a is discarded');

SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run is still running');
SELECT results_eq(
    format($$SELECT node, state, error_kind, error, finished_at FROM cyclone.cyclone_steps
              WHERE run_id = %L AND state = 'cancelled' ORDER BY node$$, :'run'),
    format($$VALUES ('b'::text, 'cancelled'::text, 'cancelled'::text, 'dependency discarded'::text, %1$L::timestamptz),
                    ('b2', 'cancelled', 'cancelled', 'dependency discarded', %1$L),
                    ('c', 'cancelled', 'cancelled', 'dependency discarded', %1$L),
                    ('j', 'cancelled', 'cancelled', 'dependency discarded', %1$L)$$, :'t1'),
    'the dependents of a and all their descendants are cancelled, and nothing else');
SELECT is(cyclone_test.state(:'run', 'y'), 'available', 'the other branch is untouched');
SELECT is(cyclone_test.state(:'run', 'z'), 'running', 'a running step elsewhere keeps its lease');

SELECT ok(cyclone.complete(:z_step_id, 'w1', :z_lease_generation, '"z"'), 'z completes');
SELECT ok(cyclone_test.run_node(:'run', 'y', '"y"'), 'y completes');
SELECT results_eq(format('SELECT state, error_kind, error, output FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('completed'::text, NULL::text, NULL::text, '{"z": "z"}'::jsonb)$$,
                  'the run completes without an error; its output holds the completed leaf z only');
SELECT is(cyclone_test.state(:'run', 'a'), 'discarded', 'a stays discarded');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_dlq WHERE run_id = :'run'), 1,
          'the contained discard is still in the dead-letter queue');

SELECT * FROM finish();
ROLLBACK;
