-- Issue 30, finding 1: a client's input nested 5,000 levels deep (under 1 MiB) was stored, and every
-- Python worker that claimed it died decoding it. Every JSON the engine stores may nest at most 100 levels
-- (_payload_problem, 03_checks.sql): a deeper input raises 22023 naming p_input and writes nothing; an
-- input at the limit is accepted.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one');

SELECT throws_ok($$SELECT cyclone.submit('one', ('{"a": ' || repeat('[', 5000) || repeat(']', 5000) || '}')::jsonb)$$,
                 '22023', 'submit: p_input is nested deeper than 100 levels; the limit is 100 levels',
                 'the 5,000-level input raises 22023 naming p_input');
SELECT throws_ok($$SELECT cyclone.submit('one', (repeat('{"k": ', 101) || '1' || repeat('}', 101))::jsonb)$$,
                 '22023', NULL, 'a value at level 101 raises 22023');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps), 0, 'no step was written');
SELECT lives_ok($$SELECT cyclone.submit('one', (repeat('{"k": ', 100) || '1' || repeat('}', 100))::jsonb)$$,
                'a value at level 100 is accepted');

SELECT * FROM finish();
ROLLBACK;
