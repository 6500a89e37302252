-- Issue 30, finding 8: a lease TTL of 1,000 years was accepted (the step was never reclaimed if its worker
-- died). p_lease_ttl is at most 1 day: a longer one raises 22023 naming it and leases nothing.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset

SELECT throws_ok($$SELECT * FROM cyclone.claim('w1', NULL, 1, '1000 years')$$, '22023',
                 'claim: p_lease_ttl must be at most 1 day (got 1000 years)', '1,000 years raises 22023 naming p_lease_ttl');
SELECT throws_ok($$SELECT * FROM cyclone.claim('w1', NULL, 1, '1 day 00:00:00.000001')$$, '22023', NULL,
                 'a microsecond over a day raises 22023');
SELECT throws_ok($$SELECT * FROM cyclone.claim('w1', NULL, 1, '178000000 years')$$, '22023', NULL,
                 'the longest interval raises 22023, not 22008');
SELECT is(cyclone_test.state(:'run'), 'available', 'no bad call claimed anything');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 1, '1 day')), 1, 'exactly 1 day is accepted');
SELECT is((cyclone_test.step(:'run')).lease_expiry, cyclone.now() + interval '1 day', 'the lease runs for a day');

SELECT * FROM finish();
ROLLBACK;
