-- A workflow whose root child node runs the workflow itself must not recurse
-- until the stack runs out: the 32nd level's child node is discarded as
-- child_failed, and the failure climbs back up to the root run.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('loop', '[{"name": "again", "kind": "child", "workflow": "loop"}]');
SELECT lives_ok($$SELECT cyclone.submit('loop')$$, 'submitting a self-starting workflow does not blow the stack');

SELECT is((SELECT count(*) FROM cyclone.cyclone_runs WHERE workflow = 'loop'), 32::bigint,
          'runs nest 32 deep, no deeper');
SELECT is((SELECT count(*) FROM cyclone.cyclone_steps WHERE error_kind = 'child_failed'
            AND error LIKE 'child runs nest deeper than 32 levels%'), 1::bigint,
          'the deepest child node is discarded with a clear error');
SELECT is((SELECT r.state FROM cyclone.cyclone_runs r WHERE r.parent_run_id IS NULL AND r.workflow = 'loop'),
          'failed', 'the failure reaches the root run');

SELECT * FROM finish();
ROLLBACK;
