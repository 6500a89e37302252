BEGIN;
SELECT plan(1);
SELECT throws_ok($$SELECT cyclone.resume(gen_random_uuid())$$, 'P0002', NULL, 'resume of an unknown run raises P0002');
SELECT * FROM finish();
ROLLBACK;
