-- SPEC 17: an event node makes its key from its template ({path} replaced by the value's text) when reached,
-- and waits on it (explain_step: waiting_event {key}); emit_event records the event and, in its transaction,
-- completes every event node waiting on that key with the payload as output, advancing their DAGs, and
-- returns how many it completed. An event of another key completes nothing. cyclone_v_events lists it.
BEGIN;
SELECT plan(12);

SELECT cyclone_test.define('order', '[
    {"name": "paid", "kind": "event", "key": "payment:{input.order_id}"},
    {"name": "ship", "deps": ["paid"]}]');
SELECT cyclone.submit('order', '{"order_id": 42}') AS r1 \gset
SELECT cyclone.submit('order', '{"order_id": 42}') AS r2 \gset
SELECT cyclone.submit('order', '{"order_id": "x7"}') AS r3 \gset

SELECT is(cyclone_test.state(:'r1', 'paid'), 'waiting', 'a root event node is reached at submit and waits');
SELECT is((cyclone_test.step(:'r1', 'paid')).event_key, 'payment:42', 'on the key its template made');
SELECT is((cyclone_test.step(:'r3', 'paid')).event_key, 'payment:x7', 'a string value is its characters');
SELECT is(cyclone.explain_step((cyclone_test.step(:'r1', 'paid')).id),
          '{"reason": "waiting_event", "key": "payment:42"}'::jsonb, 'explain_step: waiting_event {key}');
SELECT is(cyclone.emit_event('payment:41', '{"amount": 1}'), 0, 'an event of another key completes nothing');
SELECT is(cyclone.emit_event('payment:42', '{"amount": 10}'), 2, 'emit_event returns how many nodes it completed');
SELECT is(cyclone_test.state(:'r1', 'paid'), 'completed', 'the waiting node completed');
SELECT is((cyclone_test.step(:'r2', 'paid')).output, '{"amount": 10}'::jsonb, 'with the payload as its output');
SELECT is(cyclone_test.state(:'r2', 'ship'), 'available', 'and its DAG advanced');
SELECT is(cyclone_test.state(:'r3', 'paid'), 'waiting', 'a node of another key still waits');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_events WHERE key IN ('payment:41', 'payment:42')
                                                          AND emitted_at = cyclone.now()), 2,
          'cyclone_v_events lists the events with their emitted time');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
