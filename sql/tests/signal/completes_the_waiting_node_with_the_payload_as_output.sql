-- A signal for a waiting wait node completes it with the payload as output and
-- advances the DAG in the same call.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('sg', '[{"name": "approval", "kind": "wait", "signal": "approved"},
                                   {"name": "ship", "deps": ["approval"]}]') \gset
SELECT cyclone.submit('sg') AS run \gset
SELECT is(cyclone_test.state(:'run', 'approval'), 'waiting', 'the root wait node is waiting');
SELECT cyclone.advance_time('5 minutes') \gset

SELECT is(cyclone.signal(:'run', 'approved', '{"by": "alice"}'), true, 'the signal is accepted');
SELECT results_eq(
    format($$SELECT state, output, finished_at, error_kind FROM cyclone.cyclone_steps
              WHERE run_id = %L AND node = 'approval'$$, :'run'),
    format($$VALUES ('completed', '{"by": "alice"}'::jsonb, %L::timestamptz, NULL::text)$$, cyclone.now()),
    'the wait node is completed now with the payload as output');
SELECT results_eq(
    format($$SELECT state, scheduled_at FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'ship'$$, :'run'),
    format($$VALUES ('available', %L::timestamptz)$$, cyclone.now()),
    'its dependent is available now');
SELECT is(cyclone.signal(:'run', 'approved', '{"by": "bob"}'), false, 'a second signal has no wait node left');
SELECT is((cyclone_test.step(:'run', 'approval')).output, '{"by": "alice"}'::jsonb, 'the first payload stays');

SELECT * FROM finish();
ROLLBACK;
