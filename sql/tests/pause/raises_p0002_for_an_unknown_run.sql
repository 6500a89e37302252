BEGIN;
SELECT plan(1);
SELECT throws_ok($$SELECT cyclone.pause(gen_random_uuid())$$, 'P0002', NULL, 'pause of an unknown run raises P0002');
SELECT * FROM finish();
ROLLBACK;
