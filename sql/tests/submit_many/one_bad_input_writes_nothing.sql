-- submit_many is all or nothing: a NULL element (22004), an input over 1 MiB
-- (22023) or an unknown workflow (P0002) fails the call and no run is written,
-- not even for the inputs before the bad one.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('one');
SELECT throws_ok($$SELECT cyclone.submit_many('one', ARRAY['{"i": 1}', NULL, '{"i": 3}']::jsonb[])$$,
                 '22004', NULL, 'a NULL element raises 22004');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run written for a NULL element');

SELECT throws_ok(format($$SELECT cyclone.submit_many('one', ARRAY['{"i": 1}', %L]::jsonb[])$$,
                        jsonb_build_object('blob', repeat('x', 1100000))),
                 '22023', NULL, 'an input over 1 MiB (the second) raises 22023');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'the first input''s run is not written either');

SELECT throws_ok($$SELECT cyclone.submit_many('nope', ARRAY['{}']::jsonb[])$$, 'P0002', NULL, 'unknown workflow: P0002');
SELECT throws_ok($$SELECT cyclone.submit_many(NULL, ARRAY['{}']::jsonb[])$$, '22004', NULL, 'NULL workflow: 22004');
SELECT throws_ok($$SELECT cyclone.submit_many('one', NULL)$$, '22004', NULL, 'NULL array: 22004');

SELECT * FROM finish();
ROLLBACK;
