-- A -> B -> C: each step is reached only when its dependency completes, and its
-- claim carries the run input and the dependency's output in deps.
BEGIN;
SELECT plan(17);

SELECT cyclone_test.define('chain', '[{"name":"a"},{"name":"b","deps":["a"]},{"name":"c","deps":["b"]}]') AS wf \gset
SELECT cyclone.submit('chain', '{"order": 7}') AS run \gset

SELECT is(cyclone_test.state(:'run', 'a'), 'available', 'the root a is available at submit');
SELECT is(cyclone_test.state(:'run', 'b'), 'pending', 'b is pending until a completes');
SELECT is(cyclone_test.state(:'run', 'c'), 'pending', 'c is pending until b completes');

SELECT * FROM cyclone_test.claim_node(:'run', 'a') \gset a_
SELECT is(:'a_deps'::jsonb, '{}'::jsonb, 'a root step is claimed with empty deps');
SELECT is(:'a_input'::jsonb, '{"order": 7}'::jsonb, 'a step is claimed with the run input');

SELECT cyclone.advance_time('5 minutes') AS t1 \gset
SELECT ok(cyclone.complete(:a_step_id, 'w1', :a_lease_generation, '{"charged": 42}'), 'a completes');
SELECT is(cyclone_test.state(:'run', 'b'), 'available', 'completing a reaches b in the same transaction');
SELECT is((cyclone_test.step(:'run', 'b')).scheduled_at, :'t1'::timestamptz,
          'b is scheduled at the engine time of the advance');
SELECT is(cyclone_test.state(:'run', 'c'), 'pending', 'c still waits for b');

SELECT * FROM cyclone_test.claim_node(:'run', 'b') \gset b_
SELECT is(:'b_deps'::jsonb, '{"a": {"charged": 42}}'::jsonb, 'b is claimed with a''s output in deps');
SELECT is(:'b_input'::jsonb, '{"order": 7}'::jsonb, 'b is claimed with the run input, not a''s output');
SELECT ok(cyclone.complete(:b_step_id, 'w1', :b_lease_generation, '"shipped"'), 'b completes');

SELECT * FROM cyclone_test.claim_node(:'run', 'c') \gset c_
SELECT is(:'c_deps'::jsonb, '{"b": "shipped"}'::jsonb, 'c sees only its own dependency b, with its output');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run is running while c runs');
SELECT ok(cyclone.complete(:c_step_id, 'w1', :c_lease_generation, '{"done": true}'), 'c completes');

SELECT is(cyclone_test.run_state(:'run'), 'completed', 'the run completes with its last step');
SELECT is((SELECT output FROM cyclone.get_run(:'run')), '{"c": {"done": true}}'::jsonb,
          'the run output holds only the leaf c');

SELECT * FROM finish();
ROLLBACK;
