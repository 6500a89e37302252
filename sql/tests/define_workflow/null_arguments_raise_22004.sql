-- A NULL name or definition raises 22004 (null value not allowed) and writes nothing.
BEGIN;
SELECT plan(4);

SELECT throws_ok($$SELECT cyclone.define_workflow(NULL, '{"nodes": [{"name": "a"}]}')$$, '22004', NULL, 'NULL name');
SELECT throws_ok($$SELECT cyclone.define_workflow('wf', NULL)$$, '22004', NULL, 'NULL definition');
SELECT throws_ok($$SELECT cyclone.define_workflow(NULL, NULL)$$, '22004', NULL, 'both NULL');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'wf' OR name IS NULL), 0, 'nothing was written');
SELECT * FROM finish();
ROLLBACK;
