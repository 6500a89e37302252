-- A partial retry: the run had two dead letters and only one is retried. The
-- run runs again, steps that depend on the other dead letter stay cancelled, and
-- once the retried work is done the run fails again, with the remaining
-- dead letter as its error.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('partial', '[{"name":"p"},{"name":"q"},{"name":"pp","deps":["p"]},{"name":"qq","deps":["q"]}]') AS wf \gset
SELECT cyclone.submit('partial', '{}', '5 minutes') AS run \gset
SELECT cyclone.advance_time('6 minutes') AS t1 \gset
SELECT results_eq('SELECT * FROM cyclone.enforce_deadlines()', format('VALUES (%L::uuid)', :'run'),
                  'the deadline discards p and q and fails the run');

SELECT cyclone.advance_time('1 minute') AS t2 \gset
SELECT lives_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'p'), 'retry p only');
SELECT results_eq(format('SELECT node, state FROM cyclone.cyclone_steps WHERE run_id = %L ORDER BY node', :'run'),
                  $$VALUES ('p'::text, 'available'::text), ('pp', 'pending'), ('q', 'discarded'), ('qq', 'cancelled')$$,
                  'p is reopened with its dependent; q stays a dead letter and qq stays cancelled');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run is running');

SELECT ok(cyclone_test.run_node(:'run', 'p', '1') AND cyclone_test.run_node(:'run', 'pp', '2'), 'p and pp complete');
SELECT results_eq(format('SELECT state, error_kind, error, finished_at, output FROM cyclone.get_run(%L)', :'run'),
                  format($$VALUES ('failed'::text, 'deadline'::text, 'run deadline exceeded'::text, %L::timestamptz, NULL::jsonb)$$, :'t2'),
                  'with q still discarded the run fails again, reporting q''s error');
SELECT is(cyclone_test.state(:'run', 'qq'), 'cancelled', 'qq is still cancelled');

SELECT * FROM finish();
ROLLBACK;
