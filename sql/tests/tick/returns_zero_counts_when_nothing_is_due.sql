-- tick() with nothing due returns every count at zero, and repeating it changes
-- nothing (idempotent).
BEGIN;
SELECT plan(5);

SELECT is(cyclone.tick(),
          '{"reclaimed": 0, "retried": 0, "discarded": 0, "deadlines": 0, "max_wait": 0, "slept": 0, "scheduled": 0, "skipped_slots": 0, "archived": 0, "discarded_steps": []}'::jsonb,
          'an empty engine: all zeros');

SELECT cyclone_test.one_step('tz', 3, '1 hour') \gset
SELECT cyclone_test.define('tzw', '[{"name": "w", "kind": "wait", "max_wait": "1 hour"}]') \gset
SELECT cyclone.submit('tz', '{}', '1 hour') AS run \gset
SELECT cyclone.submit('tzw', '{}', '1 hour') AS wrun \gset
SELECT cyclone_test.claim_node(:'run') \gset
SELECT cyclone.advance_time('29 seconds') \gset

SELECT is(cyclone.tick(),
          '{"reclaimed": 0, "retried": 0, "discarded": 0, "deadlines": 0, "max_wait": 0, "slept": 0, "scheduled": 0, "skipped_slots": 0, "archived": 0, "discarded_steps": []}'::jsonb,
          'live lease, timeout, deadline and max_wait not yet due: all zeros');
SELECT is(cyclone.tick(),
          '{"reclaimed": 0, "retried": 0, "discarded": 0, "deadlines": 0, "max_wait": 0, "slept": 0, "scheduled": 0, "skipped_slots": 0, "archived": 0, "discarded_steps": []}'::jsonb,
          'a second tick: still all zeros');
SELECT is(cyclone_test.state(:'run'), 'running', 'the running step is untouched');
SELECT is(cyclone_test.state(:'wrun', 'w'), 'waiting', 'the waiting step is untouched');

SELECT * FROM finish();
ROLLBACK;
