-- SPEC 16: p_priority between -1000 and 1000 (22023 otherwise, nothing written; NULL is 22004), for
-- submit and submit_many.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('one');
SELECT throws_ok($$SELECT cyclone.submit('one', p_priority => 1001)$$, '22023',
                 'submit: p_priority must be between -1000 and 1000 (got 1001)', 'above 1000: 22023');
SELECT throws_ok($$SELECT cyclone.submit('one', p_priority => -1001)$$, '22023', NULL, 'below -1000: 22023');
SELECT throws_ok($$SELECT cyclone.submit('one', p_priority => NULL)$$, '22004', NULL, 'NULL: 22004');
SELECT throws_ok($$SELECT cyclone.submit_many('one', ARRAY['{}'::jsonb], NULL, 5000)$$, '22023',
                 'submit_many: p_priority must be between -1000 and 1000 (got 5000)', 'submit_many too');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'nothing was written');
SELECT lives_ok($$SELECT cyclone.submit('one', p_priority => 1000)$$, '1000 is allowed');
SELECT lives_ok($$SELECT cyclone.submit('one', p_priority => -1000)$$, '-1000 is allowed');

SELECT * FROM finish();
ROLLBACK;
