-- SPEC 17: with p_debounce_key and p_debounce, a submit finds the workflow's run of that key none of whose
-- steps has been claimed: its input becomes p_input, its root steps are rescheduled to now + p_debounce
-- (bounded by created_at + p_debounce_max), and its id is returned; no run is created. Otherwise a new run
-- is created whose root steps are scheduled at now + p_debounce.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.define('reindex', '[{"name": "index", "handler": "index"}, {"name": "after", "handler": "after", "deps": ["index"]}]');
SELECT cyclone.submit('reindex', '{"v": 1}', p_debounce_key => 'doc:1', p_debounce => '10 seconds') AS run \gset
SELECT is((cyclone_test.step(:'run', 'index')).scheduled_at, cyclone.now() + interval '10 seconds',
          'a new run: its root steps are due at now + p_debounce');
SELECT cyclone.advance_time('4 seconds');
SELECT is(cyclone.submit('reindex', '{"v": 2}', p_debounce_key => 'doc:1', p_debounce => '10 seconds'), :'run'::uuid,
          'a second submit of the key returns the same run');
SELECT cyclone.advance_time('4 seconds');
SELECT is(cyclone.submit('reindex', '{"v": 3}', p_debounce_key => 'doc:1', p_debounce => '10 seconds'), :'run'::uuid,
          'and a third');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE workflow = 'reindex'), 1, 'one run was made');
SELECT is((SELECT input FROM cyclone.cyclone_runs WHERE id = :'run'), '{"v": 3}'::jsonb, 'with the last input');
SELECT is((cyclone_test.step(:'run', 'index')).input, '{"v": 3}'::jsonb, 'its steps too');
SELECT is((cyclone_test.step(:'run', 'index')).scheduled_at, cyclone.now() + interval '10 seconds',
          'due p_debounce after the last submit');
SELECT is(cyclone_test.claim_count(), 0, 'nothing is due while the burst goes on');

-- p_debounce_max bounds it: created 8 s ago, at most 12 s after its creation.
SELECT is((SELECT cyclone.submit('reindex', '{"v": 4}', p_debounce_key => 'doc:1', p_debounce => '10 seconds',
                                 p_debounce_max => '12 seconds') = :'run'::uuid
             AND (cyclone_test.step(:'run', 'index')).scheduled_at = cyclone.now() + interval '4 seconds'), true,
          'p_debounce_max bounds the start at created_at + p_debounce_max');

-- Once a step is claimed the run is under way: the next submit makes a new run.
SELECT cyclone.advance_time('4 seconds');
SELECT cyclone_test.claim_node(:'run', 'index');
SELECT isnt(cyclone.submit('reindex', '{"v": 5}', p_debounce_key => 'doc:1', p_debounce => '10 seconds'), :'run'::uuid,
            'a run with a claimed step takes no more submits: a new run');

SELECT * FROM finish();
ROLLBACK;
