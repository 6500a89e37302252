-- SPEC 18: claim's rows say when the lease runs out (now + p_lease_ttl), so a worker need not remember it.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT cyclone.now() AS t0 \gset

SELECT is(c.lease_expiry, :'t0'::timestamptz + interval '45 seconds', 'lease_expiry is now + p_lease_ttl')
  FROM cyclone.claim('w1', NULL, 1, interval '45 seconds') c;
SELECT is((cyclone_test.step(:'run')).lease_expiry, :'t0'::timestamptz + interval '45 seconds',
          'the same as the step''s lease_expiry');

SELECT * FROM finish();
ROLLBACK;
