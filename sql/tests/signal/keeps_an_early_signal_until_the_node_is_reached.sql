-- A signal sent before its wait node is reached is kept (signal returns true)
-- and consumed when the node is reached: the node completes at once.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('se', '[{"name": "charge"},
                                   {"name": "approval", "kind": "wait", "signal": "approved", "deps": ["charge"]},
                                   {"name": "ship", "deps": ["approval"]}]') \gset
SELECT cyclone.submit('se') AS run \gset

SELECT is(cyclone.signal(:'run', 'approved', '{"ok": 1}'), true, 'the early signal is accepted');
SELECT is(cyclone_test.state(:'run', 'approval'), 'pending', 'the wait node is still pending');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_signals WHERE run_id = :'run'), 1, 'the signal is kept');

SELECT cyclone.advance_time('1 minute') \gset
SELECT is(cyclone_test.run_node(:'run', 'charge'), true, 'charge completes, reaching the wait node');
SELECT results_eq(
    format($$SELECT state, output, finished_at FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'approval'$$, :'run'),
    format($$VALUES ('completed', '{"ok": 1}'::jsonb, %L::timestamptz)$$, cyclone.now()),
    'the wait node completed at once with the early payload');
SELECT is(cyclone_test.state(:'run', 'ship'), 'available', 'ship is available in the same transaction');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_signals WHERE run_id = :'run'), 0, 'the kept signal was consumed');
SELECT is(cyclone.signal(:'run', 'approved'), false, 'once consumed, another signal has nothing to wait for it');

SELECT * FROM finish();
ROLLBACK;
