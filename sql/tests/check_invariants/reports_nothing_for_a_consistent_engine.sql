-- A consistent engine, busy with every kind of work, breaks no invariant.
BEGIN;
SELECT plan(2);

SELECT cyclone.define_limit('one', 1);
SELECT cyclone_test.limited('lim', '[{"name": "one"}]');
SELECT cyclone_test.one_step('leaf') \gset
SELECT cyclone.define_workflow('dag', '{"nodes": [{"name": "a"}, {"name": "b", "deps": ["a"]},
    {"name": "w", "kind": "wait", "signal": "go", "deps": ["a"]},
    {"name": "c", "kind": "child", "workflow": "leaf", "deps": ["a"]}]}');
SELECT cyclone.submit('dag') FROM generate_series(1, 3);
SELECT cyclone.submit('lim') FROM generate_series(1, 2);
SELECT cyclone.schedule('s', '* * * * *', 'leaf');
SELECT cyclone.advance_time('2 minutes');
SELECT cyclone.tick();
SELECT count(*) FROM cyclone.claim('w1', NULL, 100);
SELECT cyclone.complete(id, 'w1', lease_generation, '{}') FROM cyclone.cyclone_steps WHERE state = 'running' AND node = 'a';
SELECT count(*) FROM cyclone.claim('w1', NULL, 100);
SELECT cyclone.cancel(id) FROM cyclone.cyclone_runs WHERE workflow = 'dag' LIMIT 1;
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state IN ('running', 'waiting', 'pending')) > 0, true,
          'work in every live state');
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'no violation');

SELECT * FROM finish();
ROLLBACK;
