-- A completed run's output maps each leaf node that completed to its output;
-- inner nodes are left out, and a NULL output is kept as a JSON null.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('leaves', '[{"name":"root"},{"name":"mid","deps":["root"]},
                                       {"name":"left","deps":["mid"]},{"name":"right","deps":["root"]},
                                       {"name":"solo"}]') AS wf \gset
SELECT cyclone.submit('leaves') AS run \gset

SELECT ok(cyclone_test.run_node(:'run', 'root', '"r"'), 'root completes');
SELECT ok(cyclone_test.run_node(:'run', 'mid', '"m"'), 'mid completes');
SELECT ok(cyclone_test.run_node(:'run', 'left', '{"l": [1, 2]}'), 'left completes');
SELECT ok(cyclone_test.run_node(:'run', 'right', '7'), 'right completes');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run is not complete while solo is left');

SELECT cyclone.advance_time('2 minutes') AS t1 \gset
SELECT * FROM cyclone_test.claim_node(:'run', 'solo') \gset s_
SELECT ok(cyclone.complete(:s_step_id, 'w1', :s_lease_generation, NULL), 'solo completes with no output');
SELECT results_eq(
    format('SELECT state, output, finished_at, error_kind, error FROM cyclone.get_run(%L)', :'run'),
    format($$VALUES ('completed'::text, '{"left": {"l": [1, 2]}, "right": 7, "solo": null}'::jsonb,
                     %L::timestamptz, NULL::text, NULL::text)$$, :'t1'),
    'the run is completed at the last completion, output holds exactly the three leaves, no error');

SELECT * FROM finish();
ROLLBACK;
