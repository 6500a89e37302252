-- A signal nobody waits for (unknown name, wait node already completed or
-- cancelled) returns false and is not kept; a paused run still takes a signal.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('sn', '[{"name": "a"},
                                   {"name": "w1", "kind": "wait", "signal": "one"},
                                   {"name": "w2", "kind": "wait", "signal": "two", "deps": ["a"]},
                                   {"name": "b", "deps": ["w1", "w2"]}]') \gset
SELECT cyclone.submit('sn') AS run \gset

SELECT is(cyclone.signal(:'run', 'nobody'), false, 'an unknown signal name returns false');
SELECT is(cyclone.signal(:'run', 'w1'), false, 'a node name is not its signal name');
SELECT is(cyclone.signal(:'run', 'one', '1'), true, 'the right signal completes w1');
SELECT is(cyclone.signal(:'run', 'one', '2'), false, 'w1 is done: no wait node for "one" still to come');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_signals WHERE run_id = :'run'), 0, 'none of those was kept');

SELECT cyclone.pause(:'run') \gset
SELECT is(cyclone.signal(:'run', 'two', '"early"'), true, 'a paused run keeps an early signal');
SELECT is((SELECT payload FROM cyclone.cyclone_signals WHERE run_id = :'run' AND name = 'two'), '"early"'::jsonb,
          'with its payload');

SELECT * FROM finish();
ROLLBACK;
