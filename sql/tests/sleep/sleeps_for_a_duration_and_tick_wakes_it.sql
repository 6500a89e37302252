-- SPEC 16: a sleep node with "duration" waits from when it is reached until reached + duration (its
-- scheduled_at); tick() completes it then with output {"woke_at": <timestamp>}, counts it as "slept", and the
-- DAG advances. explain_step answers sleeping {until}.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.define('nap', '[
    {"name": "a"},
    {"name": "cool_off", "kind": "sleep", "duration": "3 days", "deps": ["a"]},
    {"name": "b", "deps": ["cool_off"]}]');
SELECT cyclone.submit('nap') AS run \gset
SELECT cyclone_test.run_node(:'run', 'a');
SELECT cyclone.now() + interval '3 days' AS wake \gset

SELECT is(cyclone_test.state(:'run', 'cool_off'), 'waiting', 'reached: waiting');
SELECT is((cyclone_test.step(:'run', 'cool_off')).scheduled_at, :'wake'::timestamptz, 'until reached + duration');
SELECT is(cyclone.explain_step((cyclone_test.step(:'run', 'cool_off')).id),
          jsonb_build_object('reason', 'sleeping', 'until', :'wake'::timestamptz), 'explain_step: sleeping');
SELECT cyclone.advance_time('3 days' - interval '1 second');
SELECT is((cyclone.tick() ->> 'slept')::int, 0, 'not before its time');
SELECT cyclone.advance_time('1 second');
SELECT is((cyclone.tick() ->> 'slept')::int, 1, 'tick wakes it at its time, counted as slept');
SELECT is(cyclone_test.state(:'run', 'cool_off'), 'completed', 'completed');
SELECT is((cyclone_test.step(:'run', 'cool_off')).output, jsonb_build_object('woke_at', :'wake'::timestamptz),
          'with {"woke_at": ...}');
SELECT is(cyclone_test.state(:'run', 'b'), 'available', 'and the DAG advanced');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
