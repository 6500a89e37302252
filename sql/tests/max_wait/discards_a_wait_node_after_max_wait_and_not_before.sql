-- A wait node with max_wait 1 hour: one second before, tick leaves it waiting;
-- one second after, it is discarded as max_wait and the run fails.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('mw', '[{"name": "approval", "kind": "wait", "signal": "ok", "max_wait": "1 hour"},
                                   {"name": "ship", "deps": ["approval"]}]') \gset
SELECT cyclone.submit('mw') AS run \gset
SELECT is((cyclone_test.step(:'run', 'approval')).wait_expires_at, cyclone.now() + interval '1 hour',
          'the wait expires an hour after it was reached');

SELECT cyclone.advance_time('1 hour' - interval '1 second') \gset
SELECT is((cyclone.tick())->>'max_wait', '0', 'one second before: nothing expires');
SELECT is(cyclone_test.state(:'run', 'approval'), 'waiting', 'still waiting');

SELECT cyclone.advance_time('2 seconds') \gset
SELECT is((cyclone.tick())->>'max_wait', '1', 'one second after: tick expires it');
SELECT results_eq(
    format($$SELECT state, error_kind, finished_at FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'approval'$$, :'run'),
    format($$VALUES ('discarded', 'max_wait', %L::timestamptz)$$, cyclone.now()),
    'the wait node is discarded as max_wait now');
SELECT results_eq(
    format($$SELECT state, error_kind, error FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'ship'$$, :'run'),
    $$VALUES ('cancelled', 'cancelled', 'run failed')$$,
    'its dependent is cancelled by the run failure');
SELECT results_eq(format($$SELECT state, error_kind FROM cyclone.get_run(%L)$$, :'run'),
                  $$VALUES ('failed', 'max_wait')$$, 'the run failed with max_wait');
SELECT is(cyclone.signal(:'run', 'ok'), false, 'a signal after the expiry is refused');

SELECT * FROM finish();
ROLLBACK;
