-- A malformed traceparent is refused by submit with 22023 and no run or step
-- is written; the named CHECK refuses the same values on the table itself.
BEGIN;
SELECT plan(23);

SELECT cyclone_test.one_step('one') \gset
CREATE TEMP TABLE bad (value text, why text);
INSERT INTO bad VALUES
    ('', 'empty'),
    ('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331', 'no flags'),
    ('00-0AF7651916CD43DD8448EB211C80319C-B7AD6B7169203331-01', 'upper-case hex'),
    ('00-0af7651916cd43dd8448eb211c80319-b7ad6b7169203331-01', 'a 31-digit trace id'),
    ('00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01', 'a 15-digit parent id'),
    ('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-ab', 'a fifth field'),
    ('00_0af7651916cd43dd8448eb211c80319c_b7ad6b7169203331_01', 'not dashes'),
    ('00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01', 'not hex'),
    ('ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'version ff'),
    ('00-00000000000000000000000000000000-b7ad6b7169203331-01', 'an all-zero trace id'),
    ('00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01', 'an all-zero parent id');

SELECT throws_ok(format($$SELECT cyclone.submit('one', '{}', NULL, NULL, NULL, %L)$$, value),
                 '22023', NULL, 'submit refuses ' || why)
  FROM bad ORDER BY why;
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs) + (SELECT count(*)::int FROM cyclone.cyclone_steps), 0,
          'nothing was written');
SELECT cyclone.submit('one') AS run \gset
SELECT throws_ok(format($$UPDATE cyclone.cyclone_runs SET traceparent = %L WHERE id = %L$$, value, :'run'),
                 '23514', NULL, 'the CHECK run_traceparent_valid refuses ' || why)
  FROM bad ORDER BY why;

SELECT * FROM finish();
ROLLBACK;
