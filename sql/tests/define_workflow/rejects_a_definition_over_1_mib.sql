-- A definition is at most 1 MiB, as a run input is (_check_payload): a larger one (here, a long
-- description) raises 22023 and writes nothing. It used to be stored whole, and every worker reads it.
BEGIN;
SELECT plan(3);

SELECT throws_ok(
    $$SELECT cyclone.define_workflow('big', jsonb_build_object('description', repeat('x', 1100000),
                                                             'nodes', '[{"name": "a"}]'::jsonb))$$,
    '22023', NULL, 'a definition of 1.1 MB raises 22023');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'big'), 0, 'nothing was written');
SELECT lives_ok(
    $$SELECT cyclone.define_workflow('big', jsonb_build_object('description', repeat('x', 1000000),
                                                             'nodes', '[{"name": "a"}]'::jsonb))$$,
    'one of 1,000,000 characters is accepted');

SELECT * FROM finish();
ROLLBACK;
