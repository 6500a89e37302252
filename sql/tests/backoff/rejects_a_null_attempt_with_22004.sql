BEGIN;
SELECT plan(1);

SELECT throws_ok($$SELECT cyclone.backoff(NULL)$$, '22004', NULL, 'backoff(NULL) raises 22004');

SELECT * FROM finish();
ROLLBACK;
