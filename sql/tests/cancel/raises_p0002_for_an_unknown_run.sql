BEGIN;
SELECT plan(1);

SELECT throws_ok($$SELECT cyclone.cancel(gen_random_uuid(), 'whatever')$$, 'P0002', NULL, 'cancel of an unknown run raises P0002');

SELECT * FROM finish();
ROLLBACK;
