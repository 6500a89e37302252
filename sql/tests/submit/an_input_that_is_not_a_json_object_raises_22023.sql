-- Issue 30, finding 8: a run input is a JSON object (as schedule() already required): an array, a
-- string, a number, a boolean or JSON null raises 22023 naming p_input and writes nothing. SQL NULL is
-- still 22004 (null_arguments_raise_22004.sql), and the default input is {}.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('one');

SELECT throws_ok($$SELECT cyclone.submit('one', '[1, 2]')$$, '22023',
                 'submit: p_input must be a JSON object (got array)', 'an array raises 22023 naming p_input');
SELECT throws_ok($$SELECT cyclone.submit('one', 'null')$$, '22023',
                 'submit: p_input must be a JSON object (got null)', 'JSON null raises 22023');
SELECT throws_ok($$SELECT cyclone.submit('one', '"str"')$$, '22023', NULL, 'a string raises 22023');
SELECT throws_ok($$SELECT cyclone.submit('one', '42')$$, '22023', NULL, 'a number raises 22023');
SELECT throws_ok($$SELECT cyclone.submit('one', 'true')$$, '22023', NULL, 'a boolean raises 22023');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');
SELECT cyclone.submit('one') AS run \gset
SELECT is((SELECT input FROM cyclone.cyclone_runs WHERE id = :'run'), '{}'::jsonb, 'the default input is {}');

SELECT * FROM finish();
ROLLBACK;
