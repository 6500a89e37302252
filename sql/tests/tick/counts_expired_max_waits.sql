-- tick expires wait nodes past max_wait and counts them under max_wait.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.define('tmw', '[{"name": "w", "kind": "wait", "max_wait": "1 minute"}]') \gset
SELECT cyclone.submit('tmw') AS run \gset
SELECT (cyclone_test.step(:'run', 'w')).id AS wid \gset
SELECT cyclone.advance_time('61 seconds') \gset
SELECT cyclone.tick() AS t \gset

SELECT is(:'t'::jsonb - 'discarded_steps',
          '{"reclaimed": 0, "retried": 0, "discarded": 0, "deadlines": 0, "max_wait": 1, "slept": 0, "scheduled": 0, "skipped_slots": 0, "archived": 1}'::jsonb,
          'one wait expired');
SELECT results_eq(
    format($$SELECT (e->>'step_id')::bigint, e->>'workflow', e->>'error_kind'
               FROM jsonb_array_elements(%L::jsonb->'discarded_steps') e$$, :'t'),
    format($$VALUES (%s::bigint, 'tmw', 'max_wait')$$, :'wid'),
    'and listed as a max_wait dead letter');

SELECT * FROM finish();
ROLLBACK;
