BEGIN;
SELECT plan(2);

SELECT throws_ok($$SELECT * FROM cyclone.get_run('00000000-0000-0000-0000-000000000000')$$, 'P0002', NULL,
                 'get_run of an unknown id raises P0002');
SELECT throws_ok($$SELECT * FROM cyclone.get_run(gen_random_uuid())$$, 'P0002', NULL,
                 'get_run of a random id raises P0002');

SELECT * FROM finish();
ROLLBACK;
