-- A signal kept for a wait node that was never reached goes when its run leaves the live table: archive()
-- and prune() delete it themselves (no foreign key cascades since hot_path_keys, issue #32), and
-- check_invariants() reports one left without its run.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.define('gate', '[{"name": "a"}, {"name": "w", "kind": "wait", "signal": "go", "deps": ["a"]}]', 1) \gset
SELECT cyclone.tick() \gset
SELECT cyclone.submit('gate') AS archived \gset
SELECT cyclone.submit('gate') AS pruned \gset
SELECT ok(cyclone.signal(:'archived', 'go') AND cyclone.signal(:'pruned', 'go'), 'two early signals kept');
SELECT cyclone.cancel(:'archived') \gset
SELECT cyclone.cancel(:'pruned') \gset

CREATE FUNCTION pg_temp.kept(p_run uuid) RETURNS int LANGUAGE sql AS $$
    SELECT count(*)::int FROM cyclone.cyclone_signals g WHERE g.run_id = p_run
$$;
SELECT is(cyclone.archive(1), 1, 'archive moves one run');
SELECT is(pg_temp.kept(:'archived') + pg_temp.kept(:'pruned'), 1, 'its signal went with it');
SELECT cyclone.advance_time('2 hours') \gset
SELECT ok(cyclone.prune('1 hour') >= 1 AND pg_temp.kept(:'pruned') = 0 AND pg_temp.kept(:'archived') = 0,
          'prune deletes the other run and its signal');
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'nothing is left without its run');

INSERT INTO cyclone.cyclone_signals (run_id, name) VALUES (:'pruned', 'go');
SELECT results_eq('SELECT invariant FROM cyclone.check_invariants()', ARRAY['signal_without_run'],
                  'a signal left behind is reported');

SELECT * FROM finish();
ROLLBACK;
