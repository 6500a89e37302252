-- Cancelling a parent cascades to its child runs, grandchildren included.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('grandkid') \gset
SELECT cyclone_test.define('kid', '[{"name": "g", "kind": "child", "workflow": "grandkid"}]') \gset
SELECT cyclone_test.define('mom', '[{"name": "c", "kind": "child", "workflow": "kid"}, {"name": "t"}]') \gset
SELECT cyclone.submit('mom') AS run \gset
SELECT (cyclone_test.step(:'run', 'c')).child_run_id AS child \gset
SELECT (cyclone_test.step(:'child', 'g')).child_run_id AS grandchild \gset
SELECT isnt(:'grandchild'::uuid, NULL, 'the child submitted a grandchild');

SELECT is(cyclone.cancel(:'run', 'changed my mind'), true, 'the parent is cancelled');
SELECT results_eq(
    format($$SELECT id, state FROM cyclone.cyclone_runs WHERE id IN (%L, %L, %L) ORDER BY created_at, id$$,
           :'run', :'child', :'grandchild'),
    format($$SELECT * FROM (VALUES (%L::uuid, 'cancelled'), (%L::uuid, 'cancelled'), (%L::uuid, 'cancelled')) v(id, state)
              ORDER BY id$$, :'run', :'child', :'grandchild'),
    'parent, child and grandchild are all cancelled');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps
            WHERE run_id IN (:'run', :'child', :'grandchild') AND (state, error_kind) = ('cancelled', 'cancelled')), 4,
          'every step of the three runs is cancelled with kind cancelled');
SELECT is((cyclone_test.step(:'run', 'c')).error, 'run cancelled', 'the parent''s child node says run cancelled');

SELECT * FROM finish();
ROLLBACK;
