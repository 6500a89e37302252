-- A run failed by its deadline has several dead letters; retry_all reopens them
-- all, returns how many, audits each, and once the handlers succeed the run ends
-- completed with every step completed.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.define('fan', '[{"name":"b"},{"name":"c"},{"name":"e","deps":["b"]},{"name":"d","deps":["b","c"]}]') AS wf \gset
SELECT cyclone.submit('fan', '{}', '10 minutes') AS run \gset
SELECT * FROM cyclone_test.claim_node(:'run', 'c') \gset c_

SELECT cyclone.advance_time('11 minutes') AS t1 \gset
SELECT results_eq('SELECT * FROM cyclone.enforce_deadlines()', format('VALUES (%L::uuid)', :'run'), 'the deadline fails the run');
SELECT results_eq(format('SELECT node, state, error_kind FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node', :'run'),
                  $$VALUES ('b'::text, 'discarded'::text, 'deadline'::text), ('c', 'discarded', 'deadline'),
                           ('d', 'cancelled', 'cancelled'), ('e', 'cancelled', 'cancelled')$$,
                  'two dead letters, two cancelled steps');

SELECT is(cyclone.retry_all(:'run', 'deadline was too short'), 2, 'retry_all reopens both dead letters');
SELECT results_eq(format('SELECT state, deadline_at, finished_at FROM cyclone.cyclone_runs WHERE id = %L', :'run'),
                  $$VALUES ('running'::text, NULL::timestamptz, NULL::timestamptz)$$,
                  'the run runs again, and the operator took over from its passed deadline');
SELECT results_eq(format('SELECT node, state FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node', :'run'),
                  $$VALUES ('b'::text, 'available'::text), ('c', 'available'), ('d', 'pending'), ('e', 'pending')$$,
                  'the dead letters are available, the cancelled steps pending');
SELECT results_eq(format($$SELECT node, action, reason FROM cyclone.cyclone_audit WHERE run_id = %L ORDER BY node$$, :'run'),
                  $$VALUES ('b'::text, 'retry'::text, 'deadline was too short'::text), ('c', 'retry', 'deadline was too short')$$,
                  'one audit row per reopened step');
SELECT ok(NOT cyclone.complete(:c_step_id, 'w1', :c_lease_generation, '"stale"'), 'the lease from before the deadline stays dead');

-- The handlers now succeed.
SELECT ok(cyclone_test.run_node(:'run', 'b', '"b"') AND cyclone_test.run_node(:'run', 'c', '"c"')
          AND cyclone_test.run_node(:'run', 'e', '"e"') AND cyclone_test.run_node(:'run', 'd', '"d"'),
          'b, c, e and d complete');
SELECT results_eq(format('SELECT state, error_kind, error, output FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('completed'::text, NULL::text, NULL::text, '{"d": "d", "e": "e"}'::jsonb)$$,
                  'the run ends completed, without error');
SELECT is((SELECT array_agg(DISTINCT state) FROM cyclone.cyclone_steps WHERE run_id = :'run'), ARRAY['completed'],
          'every step is completed');

SELECT * FROM finish();
ROLLBACK;
