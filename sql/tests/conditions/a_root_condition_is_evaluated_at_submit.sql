-- SPEC 16: a root node is reached in the submitting transaction: its condition is evaluated at submit. A run
-- whose every node is skipped completes at once with output {}.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('gate', '[{"name": "work", "when": {"input": {"enabled": true}}}]');
SELECT cyclone.submit('gate', '{"enabled": true}') AS yes \gset
SELECT cyclone.submit('gate', '{"enabled": false}') AS no \gset
SELECT is(cyclone_test.state(:'yes'), 'available', 'the condition holds: available at submit');
SELECT is(cyclone_test.state(:'no'), 'skipped', 'it does not: skipped at submit');
SELECT is(cyclone_test.run_state(:'no'), 'completed', 'a run of skipped steps completes');
SELECT is((SELECT output FROM cyclone.cyclone_runs WHERE id = :'no'), '{}'::jsonb, 'with an empty output');

SELECT * FROM finish();
ROLLBACK;
