-- SPEC 16: submit_many's p_priority (after p_deadline) is every run's.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.define('prio', '[{"name": "work", "priority": 3}]');
SELECT cyclone.submit_many('prio', ARRAY['{}'::jsonb, '{}'::jsonb], NULL, -3);
SELECT is(ARRAY(SELECT priority FROM cyclone.cyclone_v_runs), ARRAY[-3, -3], 'each run keeps it');
SELECT is(ARRAY(SELECT priority FROM cyclone.cyclone_v_steps), ARRAY[0, 0], 'each step adds it to its node''s');

SELECT * FROM finish();
ROLLBACK;
