-- SPEC 12: explain_step says why a step is not running, the first that applies
-- of: its terminal state, running, waiting_signal, waiting_child, pending_deps
-- (with deps), run_terminal, run_paused, not_due (with until),
-- concurrency_limit (limit, bucket, running, max), rate_limit (limit, bucket,
-- next_slot_at), else claimable. Unknown id: P0002; NULL: 22004.
BEGIN;
SELECT plan(17);

SELECT cyclone_test.define('dag', '[{"name": "a"}, {"name": "b", "deps": ["a"]},
    {"name": "g", "kind": "wait", "signal": "go", "deps": ["a"]}, {"name": "kid", "kind": "child", "workflow": "one", "deps": ["a"]}]');
SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('dag') AS dag \gset
SELECT is(cyclone.explain_step((cyclone_test.step(:'dag', 'b')).id), '{"reason": "pending_deps", "deps": ["a"]}', 'pending_deps');
SELECT is(cyclone.explain_step((cyclone_test.step(:'dag', 'a')).id), '{"reason": "claimable", "workers": 0}', 'claimable');
SELECT cyclone.pause(:'dag');
SELECT is(cyclone.explain_step((cyclone_test.step(:'dag', 'a')).id), '{"reason": "run_paused"}', 'run_paused');
SELECT cyclone.resume(:'dag');
SELECT cyclone_test.claim_node(:'dag', 'a') \gset
SELECT is(cyclone.explain_step((cyclone_test.step(:'dag', 'a')).id), '{"reason": "running"}', 'running');
SELECT cyclone.complete((cyclone_test.step(:'dag', 'a')).id, 'w1', (cyclone_test.step(:'dag', 'a')).lease_generation);
SELECT is(cyclone.explain_step((cyclone_test.step(:'dag', 'a')).id), '{"reason": "completed"}', 'completed');
SELECT is(cyclone.explain_step((cyclone_test.step(:'dag', 'g')).id) ->> 'reason', 'waiting_signal', 'waiting_signal');
SELECT is(cyclone.explain_step((cyclone_test.step(:'dag', 'kid')).id) ->> 'reason', 'waiting_child', 'waiting_child');
SELECT cyclone.cancel(:'dag');
SELECT is(cyclone.explain_step((cyclone_test.step(:'dag', 'b')).id), '{"reason": "cancelled"}', 'cancelled');

SELECT cyclone.submit('one') AS one \gset
SELECT is(cyclone_test.fail_node(:'one', 'work', 'permanent'), 'discarded', 'a permanent failure');
SELECT is(cyclone.explain_step((cyclone_test.step(:'one')).id), '{"reason": "discarded"}', 'discarded');
SELECT cyclone.submit('one') AS later \gset
SELECT cyclone_test.fail_node(:'later', 'work', 'error', '1 hour');
SELECT is(cyclone.explain_step((cyclone_test.step(:'later')).id),
          jsonb_build_object('reason', 'not_due', 'until', (cyclone_test.step(:'later')).scheduled_at), 'not_due with until');

SELECT cyclone.define_limit('c', 1);
SELECT cyclone.define_limit('r', NULL, 1, '1 minute');
SELECT cyclone_test.limited('lim', '[{"name": "r", "key": "t"}, {"name": "c", "key": "t"}]');
SELECT cyclone.submit('lim', '{"t": "x"}') AS l1 \gset
SELECT cyclone.submit('lim', '{"t": "x"}') AS l2 \gset
SELECT cyclone.now() AS t0 \gset
SELECT cyclone_test.claim_count(10);
SELECT is(cyclone.explain_step((cyclone_test.step(:'l2')).id),
          '{"reason": "concurrency_limit", "limit": "c", "bucket": "x", "running": 1, "max": 1}',
          'concurrency_limit comes before rate_limit');
SELECT cyclone.complete((cyclone_test.step(:'l1')).id, 'w1', (cyclone_test.step(:'l1')).lease_generation);
SELECT is(cyclone.explain_step((cyclone_test.step(:'l2')).id),
          jsonb_build_object('reason', 'rate_limit', 'limit', 'r', 'bucket', 'x', 'next_slot_at', :'t0'::timestamptz + interval '1 minute'),
          'rate_limit with next_slot_at: when the oldest claim leaves the window');
SELECT cyclone.advance_time('1 minute');
SELECT is(cyclone.explain_step((cyclone_test.step(:'l2')).id), '{"reason": "claimable", "workers": 0}', 'claimable once the window moved');

-- run_terminal: an available step of an ended run (the engine never leaves one; forced here).
UPDATE cyclone.cyclone_runs SET state = 'completed', finished_at = cyclone.now() WHERE id = :'l2';
SELECT is(cyclone.explain_step((cyclone_test.step(:'l2')).id), '{"reason": "run_terminal", "run_state": "completed"}', 'run_terminal');
SELECT throws_ok($$SELECT cyclone.explain_step(-1)$$, 'P0002', NULL, 'unknown step: P0002');
SELECT throws_ok($$SELECT cyclone.explain_step(NULL)$$, '22004', NULL, 'NULL: 22004');

SELECT * FROM finish();
ROLLBACK;
