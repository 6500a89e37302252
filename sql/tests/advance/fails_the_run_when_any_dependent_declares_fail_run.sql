-- Mixed policies: one dependent on cancel_branch and one on fail_run. The
-- discard is not contained: the run fails and everything live is cancelled
-- with 'run failed'.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('mixed', '[{"name":"a"},
                                      {"name":"soft","deps":["a"],"on_dep_failure":"cancel_branch"},
                                      {"name":"hard","deps":["a"],"on_dep_failure":"fail_run"},
                                      {"name":"other"}]') AS wf \gset
SELECT cyclone.submit('mixed') AS run \gset

SELECT is(cyclone_test.fail_node(:'run', 'a', 'permanent'), 'discarded', 'a is discarded');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run fails');
SELECT results_eq(
    format($$SELECT node, state, error FROM cyclone.cyclone_steps WHERE run_id = %L AND node <> 'a' ORDER BY node$$, :'run'),
    $$VALUES ('hard'::text, 'cancelled'::text, 'run failed'::text), ('other', 'cancelled', 'run failed'),
             ('soft', 'cancelled', 'run failed')$$,
    'both dependents and the independent step are cancelled with "run failed"');
SELECT results_eq(format('SELECT state, error_kind, error FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('failed'::text, 'permanent'::text, 'boom'::text)$$,
                  'get_run reports the discard of a: it was not contained');

SELECT * FROM finish();
ROLLBACK;
