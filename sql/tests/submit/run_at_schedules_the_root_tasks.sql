-- p_run_at delays the root tasks: they are available but scheduled at p_run_at,
-- so claim takes them only once the engine clock reaches it.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('later', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]');
CREATE TEMP TABLE t AS
SELECT cyclone.submit('later', '{}', p_run_at => cyclone.now() + interval '2 hours') AS run_id,
       cyclone.now() + interval '2 hours' AS run_at;

SELECT is(cyclone_test.state((SELECT run_id FROM t), 'a'), 'available', 'the root is available');
SELECT is((cyclone_test.step((SELECT run_id FROM t), 'a')).scheduled_at, (SELECT run_at FROM t), 'scheduled at p_run_at');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1')), 0, 'not claimable before p_run_at');
SELECT cyclone.advance_time('2 hours');
SELECT results_eq($$SELECT node, attempt FROM cyclone.claim('w1')$$, $$VALUES ('a'::text, 1)$$,
                  'claimable once the clock reaches p_run_at');
SELECT is(cyclone_test.state((SELECT run_id FROM t), 'b'), 'pending', 'the dependent is still pending');

SELECT * FROM finish();
ROLLBACK;
