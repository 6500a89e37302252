-- An idempotency key names one run while that run is kept, archived or not;
-- once it is pruned the key is free again.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('keyed') \gset
SELECT cyclone.submit('keyed', '{}', NULL, 'order-1') AS run \gset
SELECT cyclone_test.run_node(:'run', 'work') \gset
SELECT cyclone.archive() \gset
SELECT is(cyclone_test.archived(:'run'), true, 'the keyed run is archived');
SELECT is(cyclone.submit('keyed', '{}', NULL, 'order-1'), :'run'::uuid, 'the key still returns its run');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE workflow = 'keyed'), 1, 'and creates nothing');

SELECT cyclone.advance_time('3 days') \gset
SELECT is(cyclone.prune('1 day'), 1, 'the run is pruned');
SELECT isnt(cyclone.submit('keyed', '{}', NULL, 'order-1'), :'run'::uuid, 'then the key makes a new run');

SELECT * FROM finish();
ROLLBACK;
