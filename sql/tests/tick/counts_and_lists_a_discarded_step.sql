-- A timed-out step with no attempts left is discarded by tick: counted under
-- discarded and listed in discarded_steps; so is a reclaim_limit discard.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('td', 1, '10 seconds') \gset
SELECT cyclone.submit('td') AS run \gset
SELECT step_id AS sid FROM cyclone_test.claim_node(:'run', 'work', 'w1', '1 hour') \gset
SELECT cyclone.advance_time('11 seconds') \gset

SELECT is(cyclone.tick(),
          jsonb_build_object('reclaimed', 0, 'retried', 0, 'discarded', 1, 'deadlines', 0, 'max_wait', 0, 'slept', 0, 'scheduled', 0, 'skipped_slots', 0, 'archived', 1,
                             'discarded_steps', jsonb_build_array(jsonb_build_object(
                                 'step_id', :sid, 'run_id', :'run', 'workflow', 'td', 'node', 'work',
                                 'error_kind', 'timeout', 'error', (cyclone_test.step(:'run')).error))),
          'one step discarded, listed with its error kind');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run failed');

SELECT cyclone_test.one_step('tl', 5) \gset
SELECT cyclone.submit('tl') AS lrun \gset
SELECT cyclone_test.claim_node(:'lrun', 'work', 'w1', '30 seconds') \gset
SELECT cyclone.advance_time('31 seconds') \gset
SELECT is((cyclone.tick(1))->>'reclaimed', '1', 'first expiry with max 1 reclaim: reclaimed');
SELECT cyclone_test.claim_node(:'lrun', 'work', 'w1', '30 seconds') \gset
SELECT cyclone.advance_time('31 seconds') \gset
SELECT cyclone.tick(1) AS second \gset
SELECT is(:'second'::jsonb - 'discarded_steps',
          '{"reclaimed": 0, "retried": 0, "discarded": 1, "deadlines": 0, "max_wait": 0, "slept": 0, "scheduled": 0, "skipped_slots": 0, "archived": 1}'::jsonb,
          'second expiry: discarded, not reclaimed');
SELECT results_eq(
    format($$SELECT e->>'run_id', e->>'node', e->>'error_kind' FROM jsonb_array_elements(%L::jsonb->'discarded_steps') e$$,
           :'second'),
    format($$VALUES (%L, 'work', 'reclaim_limit')$$, :'lrun'),
    'the reclaim_limit discard is listed');

SELECT * FROM finish();
ROLLBACK;
