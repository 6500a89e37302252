-- SPEC 12: one row per limit and bucket that has a non-terminal step or a claim
-- in the current period, plus the bucket '' of every limit: name, bucket,
-- concurrency, running, rate, period, claims_in_period, available (due).
BEGIN;
SELECT plan(4);

SELECT cyclone.define_limit('t', 2, 5, '1 minute');
SELECT cyclone.define_limit('idle', 7);
SELECT cyclone_test.limited('lw', '[{"name": "t", "key": "k"}]');
SELECT cyclone.submit('lw', '{"k": "a"}') FROM generate_series(1, 4);
SELECT cyclone.submit('lw', '{"k": "b"}');
SELECT cyclone_test.claim_count(1);
SELECT results_eq($$SELECT name, bucket, concurrency, running, rate, period, claims_in_period, available
                      FROM cyclone.cyclone_v_limits ORDER BY name, bucket$$,
                  $$VALUES ('idle'::text, ''::text, 7, 0, NULL::int, NULL::interval, NULL::int, 0),
                           ('t', '', 2, 0, 5, '1 minute'::interval, 0, 0),
                           ('t', 'a', 2, 1, 5, '1 minute', 1, 3),
                           ('t', 'b', 2, 0, 5, '1 minute', 0, 1)$$,
                  'every bucket with live steps, and '''' of every limit');
SELECT cyclone.cancel(id) FROM cyclone.cyclone_runs;
SELECT results_eq($$SELECT bucket, running, claims_in_period, available FROM cyclone.cyclone_v_limits WHERE name = 't' ORDER BY bucket$$,
                  $$VALUES (''::text, 0, 0, 0), ('a', 0, 1, 0)$$, 'a: no live step but a claim in the period');
SELECT cyclone.advance_time('1 minute');
SELECT results_eq($$SELECT bucket FROM cyclone.cyclone_v_limits WHERE name = 't'$$, $$VALUES (''::text)$$,
                  'once the period passed only '''' is left');
SET ROLE cyclone_client;
SELECT lives_ok($$SELECT count(*) FROM cyclone.cyclone_v_limits$$, 'a client reads the view');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
