-- One batch mixing a run of one step (ended straight into history) and the first step of a longer run
-- (completed in place, its dependent made available), with a stale element: each answers for itself.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone_test.define('pair', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]') \gset
SELECT cyclone.tick() \gset
SELECT cyclone.submit('solo') AS solo \gset
SELECT cyclone.submit('pair') AS pair \gset
SELECT cyclone.submit('solo') AS stale \gset
CREATE TEMP TABLE c AS SELECT * FROM cyclone.claim('w1', NULL, 10);

SELECT results_eq(
    format('SELECT accepted FROM cyclone.complete_many(''w1'', ARRAY[%s, %s, %s]::bigint[], ARRAY[%s, %s, %s]::bigint[], '
           '''{"{}", "{}", "{}"}''::jsonb[])',
           (SELECT step_id FROM c WHERE run_id = :'solo'), (SELECT step_id FROM c WHERE run_id = :'pair'),
           (SELECT step_id FROM c WHERE run_id = :'stale'),
           (SELECT lease_generation FROM c WHERE run_id = :'solo'), (SELECT lease_generation FROM c WHERE run_id = :'pair'),
           (SELECT lease_generation + 1 FROM c WHERE run_id = :'stale')),
    'VALUES (true), (true), (false)', 'each element answers for itself, in order');
SELECT ok(cyclone_test.archived(:'solo') AND cyclone_test.run_state(:'solo') = 'completed', 'the whole run ended in history');
SELECT ok(NOT cyclone_test.archived(:'pair') AND cyclone_test.state(:'pair', 'a') = 'completed'
          AND cyclone_test.state(:'pair', 'b') = 'available', 'the longer run advanced in place');
SELECT ok(NOT cyclone_test.archived(:'stale') AND cyclone_test.state(:'stale') = 'running', 'the stale element changed nothing');

SELECT * FROM finish();
ROLLBACK;
