-- SPEC 14: cyclone_limit_running {limit, bucket} for a limit without a key,
-- {limit} (the total) for a keyed one, and cyclone_limit_saturated_buckets
-- {limit}: no label value comes from run input.
BEGIN;
SELECT plan(4);

SELECT cyclone.define_limit('per_tenant', 1);
SELECT cyclone.define_limit('api', 5);
SELECT cyclone.define_limit('mail', NULL, 2, '1 minute');
SELECT cyclone_test.limited('lt', '[{"name": "per_tenant", "key": "tenant"}, {"name": "api"}]');
SELECT cyclone_test.limited('lm', '[{"name": "mail"}]');
SELECT cyclone.submit('lt', jsonb_build_object('tenant', t)) FROM unnest(ARRAY['acme', 'acme', 'initech', 'umbrella']) t;
SELECT cyclone.submit('lm') FROM generate_series(1, 3);
SELECT is(cyclone_test.claim_count(100), 3 + 2, 'one per tenant (acme''s second held back), two mails');

CREATE TEMP TABLE m AS SELECT * FROM cyclone.metrics() WHERE name LIKE 'cyclone_limit%';
SELECT results_eq($$SELECT labels, value FROM m WHERE name = 'cyclone_limit_running' ORDER BY labels ->> 'limit'$$,
    $$VALUES ('{"limit": "api", "bucket": ""}'::jsonb, 3::float8), ('{"limit": "mail", "bucket": ""}', 0),
             ('{"limit": "per_tenant"}', 3)$$,
    'running slots: the keyed limit as a total, the others by their bucket ''''');
SELECT results_eq($$SELECT labels, value FROM m WHERE name = 'cyclone_limit_saturated_buckets'
                     ORDER BY labels ->> 'limit'$$,
    $$VALUES ('{"limit": "api"}'::jsonb, 0::float8), ('{"limit": "mail"}', 1), ('{"limit": "per_tenant"}', 3)$$,
    'full buckets: three tenants at their one slot, mail''s rate window');
SELECT is((SELECT count(*)::int FROM m WHERE labels::text ~ 'acme|initech|umbrella'), 0, 'no tenant in any label');

SELECT * FROM finish();
ROLLBACK;
