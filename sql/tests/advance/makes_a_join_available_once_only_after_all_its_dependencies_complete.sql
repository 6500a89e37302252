-- Fan-out / fan-in: a -> (b, c) -> d. The join d is reached exactly once, in the
-- transaction that completes its last dependency, and is claimable right there:
-- no NOTIFY is delivered inside a transaction, so correctness cannot rest on it.
BEGIN;
SELECT plan(16);

SELECT cyclone_test.define('diamond', '[{"name":"a"},{"name":"b","deps":["a"]},{"name":"c","deps":["a"]},
                                        {"name":"d","deps":["b","c"]}]') AS wf \gset
SELECT cyclone.submit('diamond') AS run \gset

SELECT ok(cyclone_test.run_node(:'run', 'a', '{"n": 1}'), 'a completes');
SELECT is(cyclone_test.state(:'run', 'b'), 'available', 'fan-out: b is available after a');
SELECT is(cyclone_test.state(:'run', 'c'), 'available', 'fan-out: c is available after a');

SELECT * FROM cyclone_test.claim_node(:'run', 'b') \gset b_
SELECT * FROM cyclone_test.claim_node(:'run', 'c') \gset c_
SELECT ok(cyclone.complete(:b_step_id, 'w1', :b_lease_generation, '"from b"'), 'b completes first');
SELECT is(cyclone_test.state(:'run', 'd'), 'pending', 'd stays pending while c is still running');
SELECT is_empty($$SELECT * FROM cyclone.claim('w2', ARRAY['d'])$$, 'd cannot be claimed before c completes');

SELECT cyclone.advance_time('1 minute') AS t1 \gset
SELECT ok(cyclone.complete(:c_step_id, 'w1', :c_lease_generation, '"from c"'), 'c, the last dependency, completes');
SELECT is(cyclone_test.state(:'run', 'd'), 'available', 'd is available once both b and c completed');
SELECT is((cyclone_test.step(:'run', 'd')).scheduled_at, :'t1'::timestamptz, 'd is scheduled at the time of the advance');
SELECT is((cyclone_test.step(:'run', 'd')).attempt, 0, 'd has not run yet');

-- A late duplicate completion of c is refused and reaches nothing again.
SELECT ok(NOT cyclone.complete(:c_step_id, 'w1', :c_lease_generation, '"again"'), 'a duplicate complete of c returns false');
SELECT is((cyclone_test.step(:'run', 'c')).output, '"from c"'::jsonb, 'the duplicate did not overwrite c''s output');

-- Claimable in this very transaction, i.e. without any notification delivered.
SELECT results_eq($$SELECT node, attempt, deps FROM cyclone.claim('w2', ARRAY['d'], 10)$$,
                  $$VALUES ('d'::text, 1, '{"b": "from b", "c": "from c"}'::jsonb)$$,
                  'one claim returns d exactly once, attempt 1, with both outputs in deps');
SELECT is_empty($$SELECT * FROM cyclone.claim('w3', NULL, 10)$$, 'nothing else is claimable: d was made available once');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'run' AND node = 'd'), 1,
          'the join has one step row');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run runs on');

SELECT * FROM finish();
ROLLBACK;
