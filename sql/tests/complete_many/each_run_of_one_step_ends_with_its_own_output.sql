-- Runs of one step ended straight into history (_complete_solo_runs, issue #32) each keep their own element's
-- output, on the step and as the run's {node: output}, whatever the order of the batch: the outputs are found
-- by each step's position in p_step_ids, not by the order the rows are deleted or inserted in.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone.tick() \gset
SELECT count(*) FROM (SELECT cyclone.submit('solo') FROM generate_series(1, 70)) f \gset
CREATE TEMP TABLE c AS SELECT * FROM cyclone.claim('w1', NULL, 100);

-- The batch in descending step order, each output naming its own step.
SELECT is((SELECT count(*)::int FROM cyclone.complete_many('w1',
              (SELECT array_agg(step_id ORDER BY step_id DESC) FROM c),
              (SELECT array_agg(lease_generation ORDER BY step_id DESC) FROM c),
              (SELECT array_agg(jsonb_build_object('step', step_id) ORDER BY step_id DESC) FROM c)) m
            WHERE m.accepted),
          70, 'every element accepted');
SELECT is_empty($$SELECT 1 FROM c JOIN cyclone.cyclone_steps s ON s.id = c.step_id
                   WHERE s.output IS DISTINCT FROM jsonb_build_object('step', c.step_id) OR s.state <> 'completed'$$,
                'each step keeps its own output');
SELECT is_empty($$SELECT 1 FROM c JOIN cyclone.cyclone_runs r ON r.id = c.run_id
                   WHERE r.output IS DISTINCT FROM jsonb_build_object('work', jsonb_build_object('step', c.step_id))
                      OR r.state <> 'completed' OR NOT cyclone_test.archived(r.id)$$,
                'each run ended in history with its own step''s output');

SELECT * FROM finish();
ROLLBACK;
