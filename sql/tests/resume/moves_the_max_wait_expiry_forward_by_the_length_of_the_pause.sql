-- A wait node with max_wait 1 hour, paused after 20 minutes for 3 hours: after
-- resume it has its 40 minutes left.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('rw', '[{"name": "w", "kind": "wait", "signal": "go", "max_wait": "1 hour"}]') \gset
SELECT cyclone.submit('rw') AS run \gset
SELECT is((cyclone_test.step(:'run', 'w')).wait_expires_at, cyclone.now() + interval '1 hour',
          'the wait expires an hour after it was reached');

SELECT cyclone.advance_time('20 minutes') \gset
SELECT cyclone.pause(:'run') \gset
SELECT cyclone.advance_time('3 hours') \gset
SELECT is((cyclone.tick())->>'max_wait', '0', 'no max_wait expiry while paused');
SELECT is(cyclone.resume(:'run'), true, 'resumed');
SELECT is((cyclone_test.step(:'run', 'w')).wait_expires_at, cyclone.now() + interval '40 minutes',
          'the wait now expires 40 minutes from now');

SELECT cyclone.advance_time('40 minutes' - interval '1 second') \gset
SELECT is((cyclone.tick())->>'max_wait', '0', 'one second before: not expired');
SELECT is(cyclone_test.state(:'run', 'w'), 'waiting', 'still waiting');
SELECT cyclone.advance_time('2 seconds') \gset
SELECT is((cyclone.tick())->>'max_wait', '1', 'one second after: expired');
SELECT results_eq(
    format($$SELECT state, error_kind FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'w'$$, :'run'),
    $$VALUES ('discarded', 'max_wait')$$,
    'the wait node is discarded as max_wait');

SELECT * FROM finish();
ROLLBACK;
