-- A signal name no wait node could have (over 200 characters, a control character: define_workflow's rule for
-- names) is bad input: 22023, and signal_with_start starts no run for it.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('gate', '[{"name": "w", "kind": "wait", "signal": "go"}]') \gset
SELECT cyclone.submit('gate') AS run \gset
SELECT throws_ok(format('SELECT cyclone.signal(%L, %L)', :'run', repeat('x', 201)), '22023', NULL,
                 'a name of 201 characters');
SELECT throws_ok(format('SELECT cyclone.signal(%L, %L)', :'run', E'go\n'), '22023', NULL, 'a control character');
SELECT throws_ok($$SELECT cyclone.signal_with_start('gate', 'k1', repeat('x', 201))$$, '22023', NULL,
                 'signal_with_start refuses it');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 1, 'and started no run');

SELECT * FROM finish();
ROLLBACK;
