-- SPEC 17: when reached, an await node whose run is already terminal ends at once (completed: its output;
-- failed or cancelled: awaited_run_failed); an archived run counts as terminal.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('job2', '[{"name": "go", "handler": "go2"}]', 1);
SELECT cyclone_test.define('watch2', '[{"name": "done", "kind": "await", "run": "input.job"}]');
SELECT cyclone.submit('job2') AS j1 \gset
SELECT cyclone_test.run_node(:'j1', 'go', '{"v": 1}');
SELECT cyclone.submit('watch2', jsonb_build_object('job', :'j1')) AS w1 \gset
SELECT is((cyclone_test.step(:'w1', 'done')).output, '{"go": {"v": 1}}'::jsonb, 'a completed run: completed at once with its output');
SELECT is(cyclone_test.run_state(:'w1'), 'completed', 'and the awaiting run went on (here: completed)');

SELECT cyclone.archive();
SELECT ok(cyclone_test.archived(:'j1'), 'the awaited run is archived');
SELECT cyclone.submit('watch2', jsonb_build_object('job', :'j1')) AS w2 \gset
SELECT is(cyclone_test.state(:'w2', 'done'), 'completed', 'an archived run counts as terminal');

SELECT cyclone.submit('job2') AS j2 \gset
SELECT cyclone.cancel(:'j2');
SELECT cyclone.submit('watch2', jsonb_build_object('job', :'j2')) AS w3 \gset
SELECT is((cyclone_test.step(:'w3', 'done')).error_kind, 'awaited_run_failed', 'a cancelled run: discarded at once');

SELECT * FROM finish();
ROLLBACK;
