-- SPEC 17: an await node reads the run id at its "run" path when reached; while that run is live it waits
-- (explain_step: waiting_run {run_id}), and the transaction that ends the awaited run ends the node: its output
-- when the run completed. A run may be awaited by many nodes of many runs.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.define('export', '[{"name": "dump", "handler": "dump"}]');
SELECT cyclone_test.define('report', '[
    {"name": "start", "handler": "start"},
    {"name": "export_done", "kind": "await", "run": "deps.start.run_id", "deps": ["start"]},
    {"name": "render", "handler": "render", "deps": ["export_done"]}]');
SELECT cyclone.submit('export') AS export \gset
SELECT cyclone.submit('report') AS r1 \gset
SELECT cyclone_test.run_node(:'r1', 'start', jsonb_build_object('run_id', :'export'));
SELECT cyclone.submit('report') AS r2 \gset
SELECT cyclone_test.run_node(:'r2', 'start', jsonb_build_object('run_id', :'export'));

SELECT is(cyclone_test.state(:'r1', 'export_done'), 'waiting', 'reached while the awaited run is live: waiting');
SELECT is((cyclone_test.step(:'r1', 'export_done')).awaited_run_id, :'export'::uuid, 'on the run its path named');
SELECT is(cyclone.explain_step((cyclone_test.step(:'r1', 'export_done')).id),
          jsonb_build_object('reason', 'waiting_run', 'run_id', :'export'::uuid), 'explain_step: waiting_run {run_id}');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold while it waits');

-- The awaited run's last step completes: in that transaction, both await nodes complete.
SELECT cyclone_test.run_node(:'export', 'dump', '{"rows": 3}');
SELECT is(cyclone_test.run_state(:'export'), 'completed', 'the awaited run completed');
SELECT is(cyclone_test.state(:'r1', 'export_done'), 'completed', 'the await node completed with it');
SELECT is((cyclone_test.step(:'r2', 'export_done')).output, '{"dump": {"rows": 3}}'::jsonb,
          'every awaiting node, with the awaited run''s output');
SELECT is(cyclone_test.state(:'r2', 'render'), 'available', 'and their DAGs advanced');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
