-- A pruned run goes with everything that belongs to it: its steps, the early
-- signals it never consumed and its operator audit trail. Another run's rows
-- stay.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('sig', '[{"name": "a"}, {"name": "w", "kind": "wait", "deps": ["a"]}]') \gset
SELECT cyclone.submit('sig') AS old_run \gset
SELECT cyclone.submit('sig') AS other_run \gset
SELECT ok(cyclone.signal(:'old_run', 'w', '{"early": true}'), 'an early signal is kept');
SELECT ok(cyclone.signal(:'other_run', 'w'), 'and one for the other run');
SELECT cyclone.pause(:'old_run') \gset
SELECT cyclone.resume(:'old_run') \gset
SELECT cyclone.cancel(:'old_run', 'test') \gset
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_audit WHERE run_id = :'old_run'), 4,
          'the kept signal, pause, resume and cancel are audited');

SELECT cyclone.advance_time('2 days') \gset
SELECT is(cyclone.prune('1 day'), 1, 'the cancelled run is pruned');
SELECT is(
    (SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'old_run')
    + (SELECT count(*)::int FROM cyclone.cyclone_signals WHERE run_id = :'old_run')
    + (SELECT count(*)::int FROM cyclone.cyclone_audit WHERE run_id = :'old_run'),
    0, 'with its steps, its signal and its audit rows');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'other_run'), 2,
          'the live run keeps its steps');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_signals WHERE run_id = :'other_run'), 1,
          'and its signal');

SELECT * FROM finish();
ROLLBACK;
