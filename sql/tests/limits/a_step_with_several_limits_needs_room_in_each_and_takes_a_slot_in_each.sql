-- SPEC 12: a step with several limits is claimed only when each of its buckets
-- has room, and takes a slot in each.
BEGIN;
SELECT plan(5);

SELECT cyclone.define_limit('tenant', 5);
SELECT cyclone.define_limit('api', 1);
SELECT cyclone_test.limited('both', '[{"name": "tenant", "key": "t"}, {"name": "api"}]');
SELECT cyclone.submit('both', '{"t": "a"}') FROM generate_series(1, 3);
SELECT is(cyclone_test.claim_count(10), 1, 'api (1) binds although tenant has room for 5');
SELECT is(cyclone_test.slots('tenant', 'a'), 1, 'a slot in tenant/a');
SELECT is(cyclone_test.slots('api'), 1, 'and one in api');
SELECT cyclone.define_limit('api', 3);
SELECT is(cyclone_test.claim_count(10), 2, 'raising api to 3 applies to the next claim');
SELECT is(cyclone_test.slots('tenant', 'a'), 3, 'tenant/a holds 3');

SELECT * FROM finish();
ROLLBACK;
