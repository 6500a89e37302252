-- SPEC 17: when reached, an event node completes at once with the payload of the earliest event of its key
-- emitted at or after its run's created_at; an event emitted before the run began does not count.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('order2', '[
    {"name": "a"},
    {"name": "paid", "kind": "event", "key": "pay:{input.id}", "deps": ["a"]}]');
SELECT cyclone.emit_event('pay:1', '{"n": 0}');
SELECT cyclone.advance_time('1 second');
SELECT cyclone.submit('order2', '{"id": 1}') AS run \gset
SELECT is(cyclone.emit_event('pay:1', '{"n": 1}'), 0, 'emitted while no node waits: nothing completed');
SELECT cyclone.advance_time('1 second');
SELECT cyclone.emit_event('pay:1', '{"n": 2}');
SELECT cyclone_test.run_node(:'run', 'a');
SELECT is(cyclone_test.state(:'run', 'paid'), 'completed', 'reached after its event: completed at once');
SELECT is((cyclone_test.step(:'run', 'paid')).output, '{"n": 1}'::jsonb,
          'with the earliest event emitted since its run began (not the older one, not the later one)');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'and the run completed');

-- A run submitted after every event of its key waits.
SELECT cyclone.advance_time('1 second');
SELECT cyclone.submit('order2', '{"id": 1}') AS later \gset
SELECT cyclone_test.run_node(:'later', 'a');
SELECT is(cyclone_test.state(:'later', 'paid'), 'waiting', 'events emitted before its run began do not count');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
