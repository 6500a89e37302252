-- One batch of 64 mixing runs of one step (ended straight into history), the first step of a longer run
-- (completed in place, its dependent made available) and a stale element: each answers for itself.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone_test.define('pair', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]') \gset
SELECT cyclone.tick() \gset
SELECT cyclone.submit('solo') AS solo \gset
SELECT cyclone.submit('pair') AS pair \gset
SELECT cyclone.submit('solo') AS stale \gset
SELECT count(*) FROM (SELECT cyclone.submit('solo') FROM generate_series(1, 61)) f \gset
CREATE TEMP TABLE c AS SELECT * FROM cyclone.claim('w1', NULL, 100);

SELECT results_eq(
    $$SELECT m.accepted, count(*)::int FROM cyclone.complete_many('w1',
          (SELECT array_agg(step_id ORDER BY step_id) FROM c),
          (SELECT array_agg(lease_generation + (run_id = (SELECT run_id FROM c ORDER BY step_id OFFSET 2 LIMIT 1))::int
                            ORDER BY step_id) FROM c),
          (SELECT array_agg('{}'::jsonb) FROM c)) m GROUP BY 1 ORDER BY 1$$,
    'VALUES (false, 1), (true, 63)', 'each element answers for itself: one stale, 63 accepted');
SELECT ok(cyclone_test.archived(:'solo') AND cyclone_test.run_state(:'solo') = 'completed', 'the whole run ended in history');
SELECT ok(NOT cyclone_test.archived(:'pair') AND cyclone_test.state(:'pair', 'a') = 'completed'
          AND cyclone_test.state(:'pair', 'b') = 'available', 'the longer run advanced in place');
SELECT ok(NOT cyclone_test.archived(:'stale') AND cyclone_test.state(:'stale') = 'running', 'the stale element changed nothing');

SELECT * FROM finish();
ROLLBACK;
