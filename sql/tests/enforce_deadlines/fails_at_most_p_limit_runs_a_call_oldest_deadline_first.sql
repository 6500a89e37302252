-- enforce_deadlines(p_limit) fails at most p_limit runs per call, the most
-- overdue first; the next call takes the rest. A non-positive limit is 22023.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('dlim') \gset
SELECT cyclone.submit('dlim', '{}', '3 minutes') AS r3 \gset
SELECT cyclone.submit('dlim', '{}', '1 minute') AS r1 \gset
SELECT cyclone.submit('dlim', '{}', '2 minutes') AS r2 \gset
SELECT cyclone.advance_time('4 minutes') \gset

SELECT results_eq($$SELECT cyclone.enforce_deadlines(2)$$, ARRAY[:'r1'::uuid, :'r2'::uuid],
                  'the two most overdue runs first');
SELECT is(cyclone_test.run_state(:'r3'), 'running', 'the third waits for the next call');
SELECT results_eq($$SELECT cyclone.enforce_deadlines(2)$$, ARRAY[:'r3'::uuid], 'the next call takes it');
SELECT throws_ok($$SELECT cyclone.enforce_deadlines(0)$$, '22023', NULL, 'p_limit 0 raises 22023');

SELECT * FROM finish();
ROLLBACK;
