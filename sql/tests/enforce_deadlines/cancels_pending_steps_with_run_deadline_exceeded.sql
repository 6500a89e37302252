-- Steps not yet reached when the deadline fires are cancelled (kind cancelled,
-- error 'run deadline exceeded'), so error_kind = 'deadline' selects exactly the
-- dead letters.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('dlp', '[{"name": "a"},
                                    {"name": "b", "deps": ["a"]},
                                    {"name": "w", "kind": "wait", "deps": ["a"]},
                                    {"name": "c", "deps": ["b", "w"]}]') \gset
SELECT cyclone.submit('dlp', '{}', '10 minutes') AS run \gset
SELECT cyclone.advance_time('11 minutes') \gset
SELECT results_eq($$SELECT cyclone.enforce_deadlines()$$, ARRAY[:'run'::uuid], 'the deadline fires');

SELECT is(cyclone_test.state(:'run', 'a'), 'discarded', 'the available root is discarded');
SELECT results_eq(
    format($$SELECT node, state, error_kind, error, completed_at FROM cyclone.cyclone_v_steps
              WHERE run_id = %L AND node <> 'a' ORDER BY node$$, :'run'),
    format($$VALUES ('b', 'cancelled', 'cancelled', 'run deadline exceeded', %1$L::timestamptz),
                    ('c', 'cancelled', 'cancelled', 'run deadline exceeded', %1$L::timestamptz),
                    ('w', 'cancelled', 'cancelled', 'run deadline exceeded', %1$L::timestamptz)$$,
           cyclone.now()),
    'pending task and wait steps are cancelled with the deadline as reason');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_steps WHERE run_id = :'run' AND error_kind = 'deadline'), 1,
          'only the reached step carries error_kind deadline');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_v_dlq WHERE run_id = :'run'), 1,
          'cancelled steps are not dead letters');
SELECT is((cyclone_test.step(:'run', 'w')).started_at, NULL, 'the unreached wait node was never started');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run is failed');

SELECT * FROM finish();
ROLLBACK;
