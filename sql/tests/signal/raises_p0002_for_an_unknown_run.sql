BEGIN;
SELECT plan(1);
SELECT throws_ok($$SELECT cyclone.signal(gen_random_uuid(), 'go', '{}')$$, 'P0002', NULL,
                 'signal to an unknown run raises P0002');
SELECT * FROM finish();
ROLLBACK;
