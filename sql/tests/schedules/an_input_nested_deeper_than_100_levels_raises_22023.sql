-- A schedule's input is a run input of every run it fires: schedule() holds it to the same limits
-- (_check_payload: at most 1 MiB, nested at most 100 levels), 22023 naming p_input, nothing written.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one');

SELECT throws_ok(format($$SELECT cyclone.schedule('deep', '@daily', 'one', %L)$$,
                        '{"a": ' || repeat('[', 5000) || repeat(']', 5000) || '}'),
                 '22023', 'schedule: p_input is nested deeper than 100 levels; the limit is 100 levels',
                 'an input nested 5,000 levels deep raises 22023 naming p_input');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_schedules), 0, 'no schedule was written');
SELECT lives_ok(format($$SELECT cyclone.schedule('deep', '@daily', 'one', %L)$$,
                       repeat('{"k": ', 100) || '1' || repeat('}', 100)),
                'an input at the limit is accepted');

SELECT * FROM finish();
ROLLBACK;
