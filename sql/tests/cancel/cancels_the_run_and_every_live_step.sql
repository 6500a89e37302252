-- cancel ends a running run: the run is cancelled, and every non-terminal step
-- (running, available, pending) is cancelled with error_kind 'cancelled' and
-- error 'run cancelled'; finished steps keep their state.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('cx', '[{"name":"a"},{"name":"b"},{"name":"c","deps":["a"]},{"name":"done"},
                                   {"name":"bad"},{"name":"guard","deps":["bad"],"on_dep_failure":"cancel_branch"}]') AS wf \gset
SELECT cyclone.submit('cx') AS run \gset
SELECT ok(cyclone_test.run_node(:'run', 'done', '"d"'), 'done completes');
SELECT is(cyclone_test.fail_node(:'run', 'bad', 'permanent'), 'discarded', 'bad is discarded (contained)');
SELECT * FROM cyclone_test.claim_node(:'run', 'a') \gset a_

SELECT cyclone.advance_time('4 minutes') AS t1 \gset
SELECT ok(cyclone.cancel(:'run', 'customer withdrew'), 'cancel returns true');
SELECT results_eq(format('SELECT state, finished_at, paused_at, output FROM cyclone.cyclone_runs WHERE id = %L', :'run'),
                  format($$VALUES ('cancelled'::text, %L::timestamptz, NULL::timestamptz, NULL::jsonb)$$, :'t1'),
                  'the run is cancelled at the engine time of the call');
SELECT results_eq(
    format($$SELECT node, state, error_kind, error, finished_at, lease_owner FROM cyclone.cyclone_steps
              WHERE run_id = %L AND node IN ('a', 'b', 'c') ORDER BY node$$, :'run'),
    format($$VALUES ('a'::text, 'cancelled'::text, 'cancelled'::text, 'run cancelled'::text, %1$L::timestamptz, NULL::text),
                    ('b', 'cancelled', 'cancelled', 'run cancelled', %1$L, NULL),
                    ('c', 'cancelled', 'cancelled', 'run cancelled', %1$L, NULL)$$, :'t1'),
    'the running, available and pending steps are cancelled with "run cancelled"');
SELECT results_eq(
    format($$SELECT node, state, error FROM cyclone.cyclone_steps WHERE run_id = %L AND node IN ('done', 'bad', 'guard') ORDER BY node$$, :'run'),
    $$VALUES ('bad'::text, 'discarded'::text, 'boom'::text), ('done', 'completed', NULL), ('guard', 'cancelled', 'dependency discarded')$$,
    'terminal steps keep their state and error');
SELECT results_eq(format('SELECT state, error_kind, error FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('cancelled'::text, NULL::text, NULL::text)$$, 'get_run: cancelled, no error');

SELECT * FROM finish();
ROLLBACK;
