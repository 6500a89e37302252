-- SPEC 17: rerun(run, node) makes a new run of the same workflow and input with rerun_of = the original; every
-- node that is neither the node nor downstream of it and that completed in the original starts completed
-- with its original output; the rest run afresh. Recorded in the audit trail.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.define('pipeline', '[
    {"name": "extract", "handler": "extract"},
    {"name": "side", "handler": "side"},
    {"name": "transform", "handler": "transform", "deps": ["extract"]},
    {"name": "load", "handler": "load", "deps": ["transform"]}]', 1);
SELECT cyclone.submit('pipeline', '{"day": "2026-12-01"}') AS run \gset
SELECT cyclone_test.run_node(:'run', 'extract', '{"rows": 10}');
SELECT cyclone_test.run_node(:'run', 'side', '{"ok": true}');
SELECT cyclone_test.fail_node(:'run', 'transform', 'permanent');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the original failed at its second stage');

SELECT cyclone.rerun(:'run', 'transform', 'bug fixed') AS again \gset
SELECT is((SELECT rerun_of FROM cyclone.cyclone_v_runs WHERE id = :'again'), :'run'::uuid, 'rerun_of names the original');
SELECT is((SELECT input FROM cyclone.cyclone_runs WHERE id = :'again'), '{"day": "2026-12-01"}'::jsonb, 'with its input');
SELECT is(cyclone_test.state(:'again', 'extract'), 'completed', 'an upstream node that completed starts completed');
SELECT is((cyclone_test.step(:'again', 'extract')).output, '{"rows": 10}'::jsonb, 'with its original output');
SELECT is((cyclone_test.step(:'again', 'side')).output, '{"ok": true}'::jsonb, 'so does an unrelated completed node');
SELECT is(cyclone_test.state(:'again', 'transform'), 'available', 'the node itself runs afresh');
SELECT is(cyclone_test.state(:'again', 'load'), 'pending', 'and what is downstream of it');
SELECT is((SELECT action || ' ' || node || ' ' || reason FROM cyclone.cyclone_v_audit WHERE run_id = :'again'),
          'rerun transform bug fixed', 'recorded in the audit trail');
SELECT is((SELECT detail FROM cyclone.cyclone_v_audit WHERE run_id = :'again'), jsonb_build_object('rerun_of', :'run'::uuid),
          'with the original run');

SELECT * FROM finish();
ROLLBACK;
