-- tick enforces run deadlines: deadlines counts the runs failed, and every step
-- it dead-lettered is listed with error_kind deadline.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.define('tdl', '[{"name": "a"}, {"name": "w", "kind": "wait"}, {"name": "c", "deps": ["a"]}]') \gset
SELECT cyclone.submit('tdl', '{}', '1 minute') AS r1 \gset
SELECT cyclone.submit('tdl', '{}', '1 minute') AS r2 \gset
SELECT cyclone.submit('tdl', '{}', '1 hour') AS r3 \gset
SELECT cyclone.advance_time('61 seconds') \gset
SELECT cyclone.tick() AS t \gset

SELECT is(:'t'::jsonb - 'discarded_steps',
          '{"reclaimed": 0, "retried": 0, "discarded": 0, "deadlines": 2, "max_wait": 0, "slept": 0, "scheduled": 0, "skipped_slots": 0, "archived": 2}'::jsonb,
          'two runs failed by their deadline; step discards by deadline are not counted as sweep discards');
SELECT results_eq(
    format($$SELECT e->>'run_id', e->>'node', e->>'error_kind', e->>'error'
               FROM jsonb_array_elements(%L::jsonb->'discarded_steps') e
              ORDER BY e->>'run_id', e->>'node'$$, :'t'),
    format($$SELECT * FROM (VALUES (%1$L, 'a', 'deadline', 'run deadline exceeded'), (%1$L, 'w', 'deadline', 'run deadline exceeded'),
                                   (%2$L, 'a', 'deadline', 'run deadline exceeded'), (%2$L, 'w', 'deadline', 'run deadline exceeded')) v
              ORDER BY 1, 2$$, :'r1', :'r2'),
    'the four dead letters are listed (the cancelled pending steps are not)');
SELECT is(cyclone_test.run_state(:'r3'), 'running', 'the run with a later deadline still runs');

SELECT * FROM finish();
ROLLBACK;
