-- claim returns the run's traceparent as a trailing column (NULL when the
-- run has none), for each step and each attempt.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('one', '[{"name": "traced"}]') \gset
SELECT cyclone_test.define('two', '[{"name": "plain"}]') \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, NULL,
                      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01') AS traced \gset
SELECT cyclone.submit('two') AS plain \gset

SELECT c.step_id, c.lease_generation, c.traceparent AS tp FROM cyclone_test.claim_node(:'traced', 'traced') c \gset
SELECT is(:'tp'::text, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'a traced run''s step carries it');
SELECT cyclone.fail(:step_id, 'w1', :lease_generation, 'boom', 'error', interval '0') \gset
SELECT results_eq(
    format($$SELECT attempt, traceparent FROM cyclone_test.claim_node(%L, 'traced')$$, :'traced'),
    $$VALUES (2, '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'::text)$$,
    'so does its retry');
SELECT is((SELECT c.traceparent FROM cyclone_test.claim_node(:'plain', 'plain') c), NULL, 'a run without one: NULL');
-- Columns are only ever added at the end, so a caller that reads them by position keeps working:
-- traceparent and previous_span came after the first twelve, lease_expiry (SPEC 18) after them.
SELECT is((SELECT (proargnames[array_position(proargnames, 'traceparent') : array_position(proargnames, 'traceparent') + 1])
             FROM pg_proc WHERE proname = 'claim' AND pronamespace = 'cyclone'::regnamespace),
          ARRAY['traceparent', 'previous_span'], 'traceparent is a trailing column, previous_span right after it');

SELECT * FROM finish();
ROLLBACK;
