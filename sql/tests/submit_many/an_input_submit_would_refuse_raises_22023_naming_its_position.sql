-- submit_many checks each input as submit does (_input_problem: a JSON object, at most 1 MiB, nested at
-- most 100 levels): the first bad one raises 22023 naming its position, and no run is written, not even
-- for the inputs before it.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one');

SELECT throws_ok($$SELECT cyclone.submit_many('one', ARRAY['{"i": 1}', '[1, 2]', '"str"']::jsonb[])$$, '22023',
                 'submit_many: input 2 must be a JSON object (got array)',
                 'an input that is not an object raises 22023 naming the first bad position');
SELECT throws_ok(format($$SELECT cyclone.submit_many('one', ARRAY['{}', '{}', %L]::jsonb[])$$,
                        '{"a": ' || repeat('[', 5000) || repeat(']', 5000) || '}'), '22023',
                 'submit_many: input 3 is nested deeper than 100 levels; the limit is 100 levels',
                 'an input nested 5,000 levels deep raises 22023 naming its position');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');
SELECT is((SELECT count(*)::int FROM cyclone.submit_many('one', ARRAY['{"i": 1}', '{"i": 2}']::jsonb[])), 2,
          'objects are accepted');

SELECT * FROM finish();
ROLLBACK;
