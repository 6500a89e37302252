-- max_wait counts from when the wait node is reached, not from submit.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('mr', '[{"name": "a"},
                                   {"name": "w", "kind": "wait", "deps": ["a"], "max_wait": "30 minutes"}]') \gset
SELECT cyclone.submit('mr') AS run \gset
SELECT is((cyclone_test.step(:'run', 'w')).wait_expires_at, NULL, 'no expiry before the node is reached');

SELECT cyclone.advance_time('2 hours') \gset
SELECT cyclone_test.run_node(:'run', 'a') \gset
SELECT results_eq(
    format($$SELECT state, started_at, wait_expires_at FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'w'$$, :'run'),
    format($$VALUES ('waiting', %L::timestamptz, %L::timestamptz)$$, cyclone.now(), cyclone.now() + interval '30 minutes'),
    'reached two hours after submit, the wait expires 30 minutes after that');
SELECT is((cyclone.tick())->>'max_wait', '0', 'the time before it was reached does not count');

SELECT cyclone.advance_time('30 minutes 1 second') \gset
SELECT is((cyclone.tick())->>'max_wait', '1', 'max_wait after it was reached, it expires');
SELECT is((cyclone_test.step(:'run', 'w')).error_kind, 'max_wait', 'as max_wait');

SELECT * FROM finish();
ROLLBACK;
