-- Every path that creates steps writes each one's workflow, its run's
-- (step_workflow.sql): submit, submit_many, a child node's run, a schedule's
-- slot; and cyclone_v_steps reads it.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.travel_to('2030-01-07 10:00+00');
SELECT cyclone_test.define('kid', '[{"name": "k"}, {"name": "l", "deps": ["k"]}]');
SELECT cyclone_test.define('parent', '[{"name": "a"}, {"name": "c", "kind": "child", "workflow": "kid", "deps": ["a"]}]');
SELECT cyclone_test.one_step('hourly');

SELECT cyclone.submit('parent') AS parent \gset
SELECT cyclone.submit_many('kid', ARRAY['{}', '{}']::jsonb[]);
SELECT cyclone_test.run_node(:'parent', 'a');
SELECT cyclone.schedule('every_hour', '0 * * * *', 'hourly');
SELECT cyclone.advance_time('1 hour');
SELECT cyclone.tick();

SELECT is((SELECT array_agg(DISTINCT workflow) FROM cyclone.cyclone_steps WHERE run_id = :'parent'),
          ARRAY['parent'], 'submit: the run''s steps are the parent''s');
SELECT is((SELECT array_agg(DISTINCT s.workflow) FROM cyclone.cyclone_steps s
             JOIN cyclone.cyclone_runs r ON r.id = s.run_id WHERE r.parent_run_id = :'parent'),
          ARRAY['kid'], 'a child node''s run: its steps are the child workflow''s');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps s JOIN cyclone.cyclone_runs r ON r.id = s.run_id
            WHERE r.workflow = 'kid' AND r.parent_run_id IS NULL AND s.workflow = 'kid'), 4,
          'submit_many: two runs, four steps of kid');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE workflow = 'hourly'), 1,
          'a schedule''s slot: its run''s step is the scheduled workflow''s');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps s JOIN cyclone.cyclone_runs r ON r.id = s.run_id
            WHERE s.workflow IS DISTINCT FROM r.workflow), 0, 'no step names another workflow than its run');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_steps v JOIN cyclone.cyclone_runs r ON r.id = v.run_id
            WHERE v.workflow = r.workflow), (SELECT count(*)::int FROM cyclone.cyclone_steps),
          'cyclone_v_steps shows every step with its run''s workflow');

SELECT * FROM finish();
ROLLBACK;
