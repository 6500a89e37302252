-- Retrying the discard that failed a run gives the run back to running; the
-- steps the failure cancelled return to pending, or are reached at once when
-- their dependencies are complete. The run can then complete.
BEGIN;
SELECT plan(14);

SELECT cyclone_test.define('rf', '[{"name":"a"},{"name":"sib"},{"name":"c","deps":["a"]},{"name":"d","deps":["c"]}]') AS wf \gset
SELECT cyclone.submit('rf') AS run \gset

SELECT * FROM cyclone_test.claim_node(:'run', 'sib', 'w2') \gset s_
SELECT ok(cyclone_test.run_node(:'run', 'a', '"a"'), 'a completes');
SELECT is(cyclone_test.fail_node(:'run', 'c', 'permanent'), 'discarded', 'c is discarded');
SELECT results_eq(format($$SELECT node, state, error FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node$$, :'run'),
                  $$VALUES ('a'::text, 'completed'::text, NULL::text), ('c', 'discarded', 'boom'),
                           ('d', 'cancelled', 'run failed'), ('sib', 'cancelled', 'run failed')$$,
                  'the run failed: d and the running sib were cancelled');

SELECT cyclone.advance_time('1 hour') AS t1 \gset
SELECT lives_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'c'), 'retry c');
SELECT results_eq(format('SELECT state, finished_at, output FROM cyclone.cyclone_runs WHERE id = %L', :'run'),
                  $$VALUES ('running'::text, NULL::timestamptz, NULL::jsonb)$$, 'the run is running again');
SELECT results_eq(
    format($$SELECT node, state, error, error_kind, finished_at,
                    CASE WHEN state = 'available' THEN scheduled_at END
               FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node$$, :'run'),
    format($$VALUES ('a'::text, 'completed'::text, NULL::text, NULL::text, %L::timestamptz, NULL::timestamptz),
                    ('c', 'available', NULL, NULL, NULL, %L),
                    ('d', 'pending', NULL, NULL, NULL, NULL),
                    ('sib', 'available', NULL, NULL, NULL, %L)$$,
           (SELECT finished_at FROM cyclone.cyclone_steps WHERE run_id = :'run' AND node = 'a'), :'t1', :'t1'),
    'c and sib are available now, d pending on c, a untouched; errors cleared');

-- The old lease of sib stays dead.
SELECT ok(NOT cyclone.complete(:s_step_id, 'w2', :s_lease_generation, '"stale"'), 'the stale lease of sib cannot complete');

SELECT * FROM cyclone_test.claim_node(:'run', 'c') \gset c_
SELECT is(:'c_deps'::jsonb, '{"a": "a"}'::jsonb, 'the retried c still gets a''s output');
SELECT is(:c_attempt, 2, 'c runs as attempt 2');
SELECT ok(cyclone.complete(:c_step_id, 'w1', :c_lease_generation, '"c"'), 'c completes');
SELECT is(cyclone_test.state(:'run', 'd'), 'available', 'd is reached');
SELECT ok(cyclone_test.run_node(:'run', 'd', '"d"'), 'd completes');
SELECT ok(cyclone_test.run_node(:'run', 'sib', '"sib"'), 'sib completes');
SELECT results_eq(format('SELECT state, error_kind, error, output FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('completed'::text, NULL::text, NULL::text, '{"d": "d", "sib": "sib"}'::jsonb)$$,
                  'the run completes, with no error left');

SELECT * FROM finish();
ROLLBACK;
