-- A signal payload becomes the wait node's output, which every reader of the run decodes: it is held to
-- the limits of every JSON the engine stores (_check_payload: at most 1 MiB, nested at most 100 levels).
-- A payload nested 5,000 levels deep raises 22023 naming p_payload; the node keeps waiting and no early
-- signal is kept.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('sig', '[{"name": "approve", "kind": "wait"}, {"name": "later", "kind": "wait", "deps": ["approve"]}]');
SELECT cyclone.submit('sig') AS run \gset

SELECT throws_ok(format($$SELECT cyclone.signal(%L, 'approve', %L)$$, :'run', repeat('[', 5000) || repeat(']', 5000)),
                 '22023', 'signal: p_payload is nested deeper than 100 levels; the limit is 100 levels',
                 'a payload nested 5,000 levels deep raises 22023 naming p_payload');
SELECT throws_ok(format($$SELECT cyclone.signal(%L, 'later', %L)$$, :'run', repeat('[', 101) || '1' || repeat(']', 101)),
                 '22023', NULL, 'an early signal is checked too');
SELECT is(cyclone_test.state(:'run', 'approve'), 'waiting', 'the node still waits');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_signals), 0, 'no signal was kept');
SELECT ok(cyclone.signal(:'run', 'approve', (repeat('[', 100) || repeat(']', 100))::jsonb),
          'a payload at the limit completes the node');

SELECT * FROM finish();
ROLLBACK;
