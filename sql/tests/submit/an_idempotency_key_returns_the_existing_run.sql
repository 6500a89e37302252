-- A second submit with an idempotency key already used for the workflow returns
-- the first run's id and creates nothing (not even with a different input).
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('pay', '[{"name": "charge"}, {"name": "mail", "deps": ["charge"]}]');
CREATE TEMP TABLE t AS SELECT cyclone.submit('pay', '{"amount": 10}', NULL, 'order-17') AS first;
CREATE TEMP TABLE t2 AS SELECT cyclone.submit('pay', '{"amount": 99}', interval '1 hour', 'order-17') AS second;

SELECT is((SELECT second FROM t2), (SELECT first FROM t), 'the same key returns the existing run id');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 1, 'one run in all');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps), 2, 'two steps in all (none created by the repeat)');
SELECT results_eq($$SELECT input, deadline_at, idempotency_key FROM cyclone.cyclone_runs$$,
                  $$VALUES ('{"amount": 10}'::jsonb, NULL::timestamptz, 'order-17'::text)$$,
                  'the existing run is untouched by the repeat''s input and deadline');

SELECT cyclone_test.run_node((SELECT first FROM t), 'charge');
SELECT is(cyclone.submit('pay', '{}', NULL, 'order-17'), (SELECT first FROM t),
          'still the same run after it has progressed');
SELECT isnt(cyclone.submit('pay', '{}', NULL, 'order-18'), (SELECT first FROM t), 'another key is another run');

SELECT * FROM finish();
ROLLBACK;
