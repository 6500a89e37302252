-- Issue 30, finding 8: submit_many with 1,000,000 inputs was accepted in one 46 s call. A call takes at
-- most 10,000 inputs: more raise 22023 naming p_inputs and write nothing; 10,000 are accepted.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one');

SELECT throws_ok($$SELECT cyclone.submit_many('one', array_fill('{}'::jsonb, ARRAY[10001]))$$, '22023',
                 'submit_many: p_inputs has 10001 inputs; the limit is 10000 a call',
                 '10,001 inputs raise 22023 naming p_inputs');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');
SELECT is((SELECT count(*)::int FROM cyclone.submit_many('one', array_fill('{}'::jsonb, ARRAY[10000]))), 10000,
          '10,000 inputs are accepted');

SELECT * FROM finish();
ROLLBACK;
