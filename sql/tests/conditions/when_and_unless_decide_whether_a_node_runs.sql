-- SPEC 16: a node with "when" runs only if the document {"input", "deps"} contains it (@>), and with
-- "unless" only if the document does not contain that; otherwise it is skipped in the transaction that
-- reached it: terminal, no error, finished_at set. A skipped leaf is absent from the run output.
BEGIN;
SELECT plan(11);

SELECT cyclone_test.define('cond', '[
    {"name": "check"},
    {"name": "ship", "deps": ["check"], "when": {"deps": {"check": {"ok": true}}}},
    {"name": "alert", "deps": ["check"], "unless": {"deps": {"check": {"ok": true}}}},
    {"name": "vip", "deps": ["check"], "when": {"input": {"tier": "gold"}}}]');

SELECT cyclone.submit('cond', '{"tier": "silver"}') AS run \gset
SELECT cyclone_test.run_node(:'run', 'check', '{"ok": true, "n": 3}');
SELECT is(cyclone_test.state(:'run', 'ship'), 'available', 'when holds: the node runs');
SELECT is(cyclone_test.state(:'run', 'alert'), 'skipped', 'unless holds: skipped');
SELECT is(cyclone_test.state(:'run', 'vip'), 'skipped', 'a condition on the input');
SELECT is((cyclone_test.step(:'run', 'alert')).finished_at, cyclone.now(), 'a skipped step is finished now');
SELECT is((cyclone_test.step(:'run', 'alert')).error, NULL, 'with no error');
SELECT is((cyclone_test.step(:'run', 'alert')).error_kind, NULL, 'and no error kind');
SELECT cyclone_test.run_node(:'run', 'ship', '"shipped"');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'a run of completed and skipped steps completes');
SELECT is((SELECT output FROM cyclone.cyclone_runs WHERE id = :'run'), '{"ship": "shipped"}'::jsonb,
          'skipped leaves are absent from the output');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_step_errors WHERE run_id = :'run'), 0, 'nothing in the errors');

SELECT cyclone.submit('cond', '{"tier": "gold"}') AS gold \gset
SELECT cyclone_test.run_node(:'gold', 'check', '{"ok": false}');
SELECT is(ARRAY[cyclone_test.state(:'gold', 'ship'), cyclone_test.state(:'gold', 'alert'),
                cyclone_test.state(:'gold', 'vip')],
          ARRAY['skipped', 'available', 'available'], 'the other way round');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
