-- Child runs nest at most 32 levels: a chain of 40 distinct workflows, each the
-- child of the one before, stops at the 32nd level's child node, discarded as
-- child_failed, and the failure climbs back up to the root run. (A workflow that
-- starts itself never gets this far: define_workflow refuses it, and the advance
-- refuses a cycle it could not see before the first child run:
-- refuses_a_child_workflow_cycle_before_the_first_child_run.sql.)
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('deep40', '[{"name": "leaf"}]');
SELECT cyclone_test.define('deep' || i, jsonb_build_array(jsonb_build_object(
           'name', 'down', 'kind', 'child', 'workflow', 'deep' || (i + 1))))
  FROM generate_series(39, 1, -1) i;
SELECT lives_ok($$SELECT cyclone.submit('deep1')$$, 'submitting a 40-level chain does not blow the stack');

SELECT is((SELECT count(*) FROM cyclone.cyclone_runs WHERE workflow LIKE 'deep%'), 32::bigint,
          'runs nest 32 deep, no deeper');
SELECT is((SELECT count(*) FROM cyclone.cyclone_steps WHERE error_kind = 'child_failed'
            AND error LIKE 'child runs nest deeper than 32 levels (workflow "deep33")%'), 1::bigint,
          'the deepest child node is discarded with a clear error');
SELECT is((SELECT r.state FROM cyclone.cyclone_runs r WHERE r.parent_run_id IS NULL AND r.workflow = 'deep1'),
          'failed', 'the failure reaches the root run');

SELECT * FROM finish();
ROLLBACK;
