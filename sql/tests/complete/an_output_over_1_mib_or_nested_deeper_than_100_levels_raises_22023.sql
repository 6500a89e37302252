-- Issue 30, finding 6: complete stored a 100 MB output (copied again into the run's output), and any
-- depth of nesting. An output is held to the limits of every JSON the engine stores (_payload_problem:
-- at most 1 MiB, nested at most 100 levels): beyond them complete raises 22023 naming p_output and writes
-- nothing (the step stays running under its lease, the run unchanged); at the limits it completes.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run') \gset

SELECT throws_ok(format($$SELECT cyclone.complete(%s, 'w1', %s, %L)$$, :step_id, :gen,
                        jsonb_build_object('blob', (SELECT string_agg(md5(i::text), '') FROM generate_series(1, 40000) i))),
                 '22023', NULL, 'an output of about 1.3 MB raises 22023');
SELECT throws_ok(format($$SELECT cyclone.complete(%s, 'w1', %s, %L)$$, :step_id, :gen,
                        repeat('[', 5000) || repeat(']', 5000)),
                 '22023', 'complete: p_output is nested deeper than 100 levels; the limit is 100 levels',
                 'an output nested 5,000 levels deep raises 22023 naming p_output');
SELECT is(cyclone_test.state(:'run'), 'running', 'the step is still running');
SELECT ok((cyclone_test.step(:'run')).output IS NULL AND (cyclone_test.step(:'run')).lease_owner = 'w1',
          'with no output, still leased to w1');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run is unchanged');

SELECT ok(cyclone.complete(:step_id, 'w1', :gen, (repeat('{"k": ', 100) || '1' || repeat('}', 100))::jsonb),
          'an output with a value at level 100 completes');
SELECT is(cyclone_test.run_state(:'run'), 'completed', 'and the run completes');
-- The run's output wraps the leaf's under its name: one level more than the engine accepts from a caller.
SELECT ok(jsonb_path_exists((SELECT output FROM cyclone.get_run(:'run')), 'strict $.**{101}'),
          'the run output holds it one level deeper (the engine''s own wrapping)');

SELECT * FROM finish();
ROLLBACK;
