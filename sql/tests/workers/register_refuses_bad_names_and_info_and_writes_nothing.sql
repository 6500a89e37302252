-- SPEC 18 and the rule for bad input: a missing argument is 22004, a bad name or info 22023 with a message
-- that says what is wrong, and nothing is written.
BEGIN;
SELECT plan(9);

SELECT throws_ok($$SELECT cyclone.register_worker(NULL, '{}')$$, '22004',
                 'register_worker: p_worker and p_info are required', 'no name: 22004');
SELECT throws_ok($$SELECT cyclone.register_worker('w', NULL)$$, '22004',
                 'register_worker: p_worker and p_info are required', 'NULL info: 22004');
SELECT throws_ok($$SELECT cyclone.register_worker('', '{}')$$, '22023',
                 'register_worker: p_worker "" is empty', 'an empty name');
SELECT throws_like($$SELECT cyclone.register_worker(repeat('x', 201), '{}')$$,
                   'register_worker: p_worker "xxx%" is 201 characters long (at most 200)', 'a long name');
SELECT throws_ok($$SELECT cyclone.register_worker(E'w\n1', '{}')$$, '22023',
                 'register_worker: p_worker "w\n1" contains a control character', 'a control character');
SELECT throws_ok($$SELECT cyclone.register_worker('w', '[1, 2]')$$, '22023',
                 'register_worker: p_info must be a JSON object (got array)', 'info must be an object');
SELECT throws_like($$SELECT cyclone.register_worker('w', jsonb_build_object('big', repeat('x', 70000)))$$,
                   'register_worker: p_info is % bytes; the limit is 64 KiB', 'info over 64 KiB');
SELECT throws_ok($$SELECT cyclone.register_worker('w', ('{"a":' || repeat('[', 150) || repeat(']', 150) || '}')::jsonb)$$,
                 '22023', 'register_worker: p_info is nested deeper than 100 levels; the limit is 100 levels',
                 'info nested too deep');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workers), 0, 'nothing was written');

SELECT * FROM finish();
ROLLBACK;
