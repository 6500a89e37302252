-- An expired lease is reclaimed by tick and counted as reclaimed.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('tr') \gset
SELECT cyclone.submit('tr') AS run \gset
SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '30 seconds') \gset
SELECT cyclone.advance_time('31 seconds') \gset

SELECT is(cyclone.tick(),
          '{"reclaimed": 1, "retried": 0, "discarded": 0, "deadlines": 0, "max_wait": 0, "slept": 0, "scheduled": 0, "skipped_slots": 0, "archived": 0, "discarded_steps": []}'::jsonb,
          'one step reclaimed');
SELECT results_eq(
    format($$SELECT state, reclaims, attempt, lease_owner FROM cyclone.cyclone_steps WHERE run_id = %L$$, :'run'),
    $$VALUES ('available', 1, 1, NULL::text)$$,
    'the step is available again, reclaims 1, attempt not charged');
SELECT is((cyclone.tick())->>'reclaimed', '0', 'a second tick reclaims nothing more');
SELECT is((SELECT attempt FROM cyclone.claim('w2')), 1, 'the reclaimed step runs attempt 1 again');

SELECT * FROM finish();
ROLLBACK;
