-- A failed run that was archived is still in the dead-letter queue; retry and
-- retry_all bring it back into the live tables, where it runs and completes,
-- and archive() takes it again once it has finished.
BEGIN;
SELECT plan(14);

SELECT cyclone_test.define('pair', '[{"name": "a"}, {"name": "b", "deps": ["a"]}]', 1) \gset
SELECT cyclone.submit('pair') AS run \gset
SELECT cyclone_test.run_node(:'run', 'a') \gset
SELECT cyclone_test.fail_node(:'run', 'b') \gset
SELECT is(cyclone.archive(), 1, 'the failed run is archived');

SELECT is((SELECT workflow FROM cyclone.cyclone_v_dlq WHERE run_id = :'run' AND node = 'b'), 'pair',
          'its dead letter is in cyclone_v_dlq');
SELECT is((SELECT count(*)::int FROM cyclone.list_dead_letters() d WHERE d.run_id = :'run'), 1,
          'and in list_dead_letters()');
SELECT is((SELECT error_kind FROM cyclone.get_run(:'run')), 'error', 'get_run gives its error kind');

SELECT lives_ok(format($$SELECT cyclone.retry(%L, 'b', 1, 'fixed')$$, :'run'), 'retry of the archived run');
SELECT is(cyclone_test.archived(:'run'), false, 'the run is back in the live table');
SELECT is((SELECT count(*)::int FROM ONLY cyclone.cyclone_steps WHERE run_id = :'run'), 2, 'with both its steps');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'running again');
SELECT is(cyclone_test.run_node(:'run', 'b'), true, 'its step is claimed and completed');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'the run completes');
SELECT is(cyclone.archive(), 1, 'and is archived again');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_audit WHERE run_id = :'run' AND action = 'retry'), 1,
          'the retry''s audit row is kept with the archived run');

-- retry_all, likewise.
SELECT cyclone.submit('pair') AS run2 \gset
SELECT cyclone_test.fail_node(:'run2', 'a') \gset
SELECT cyclone.archive() \gset
SELECT is(cyclone.retry_all(:'run2', 'again'), 1, 'retry_all reopens the archived run''s dead letter');
SELECT is(cyclone_test.archived(:'run2'), false, 'and brings the run back');

SELECT * FROM finish();
ROLLBACK;
