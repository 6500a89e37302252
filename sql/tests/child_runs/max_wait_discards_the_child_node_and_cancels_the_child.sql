-- max_wait on a child node: after it (not before) the node is discarded as
-- max_wait and the child run cancelled in the same transaction.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.one_step('kid') \gset
SELECT cyclone_test.define('mom', '[{"name": "c", "kind": "child", "workflow": "kid", "max_wait": "10 minutes"}]') \gset
SELECT cyclone.submit('mom') AS run \gset
SELECT (cyclone_test.step(:'run', 'c')).child_run_id AS child \gset

SELECT cyclone.advance_time('10 minutes' - interval '1 second') \gset
SELECT is((cyclone.tick())->>'max_wait', '0', 'one second before max_wait nothing expires');
SELECT is(cyclone_test.state(:'run', 'c'), 'waiting', 'the child node still waits');
SELECT is(cyclone_test.run_state(:'child'), 'running', 'the child still runs');

SELECT cyclone.advance_time('2 seconds') \gset
SELECT is((cyclone.tick())->>'max_wait', '1', 'one second after, tick expires one wait');
SELECT results_eq(
    format($$SELECT state, error_kind, finished_at FROM cyclone.cyclone_steps WHERE run_id = %L AND node = 'c'$$, :'run'),
    format($$VALUES ('discarded', 'max_wait', %L::timestamptz)$$, cyclone.now()),
    'the child node is discarded as max_wait');
SELECT results_eq(
    format($$SELECT r.state, s.state, s.error_kind FROM cyclone.cyclone_runs r
              JOIN cyclone.cyclone_steps s ON s.run_id = r.id WHERE r.id = %L$$, :'child'),
    $$VALUES ('cancelled', 'cancelled', 'cancelled')$$,
    'the child run and its step are cancelled');
SELECT results_eq(format($$SELECT state, error_kind FROM cyclone.get_run(%L)$$, :'run'),
                  $$VALUES ('failed', 'max_wait')$$, 'the parent failed with max_wait');

SELECT * FROM finish();
ROLLBACK;
