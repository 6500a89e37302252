-- "Writes nothing" also holds for a replacement: a bad redefinition raises 22023
-- and the registered definition stays exactly as it was.
BEGIN;
SELECT plan(4);

SELECT cyclone.define_workflow('wf', '{"max_attempts": 3, "nodes": [{"name": "a"}, {"name": "b", "deps": ["a"]}]}');
CREATE TEMP TABLE before AS SELECT definition, updated_at FROM cyclone.cyclone_workflows WHERE name = 'wf';
SELECT cyclone.advance_time('1 minute');

SELECT throws_ok($$SELECT cyclone.define_workflow('wf', '{"nodes": [{"name": "a"}, {"name": "b", "deps": ["c"]}]}')$$,
                 '22023', NULL, 'the bad redefinition is refused');
SELECT is((SELECT definition FROM cyclone.cyclone_workflows WHERE name = 'wf'), (SELECT definition FROM before),
          'the definition is unchanged');
SELECT is((SELECT updated_at FROM cyclone.cyclone_workflows WHERE name = 'wf'), (SELECT updated_at FROM before),
          'updated_at is unchanged');
CREATE TEMP TABLE t AS SELECT cyclone.submit('wf') AS run_id;
SELECT results_eq($$SELECT node, max_attempts FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM t) ORDER BY node$$,
                  $$VALUES ('a'::text, 3), ('b'::text, 3)$$, 'submit still uses the previous definition');

SELECT * FROM finish();
ROLLBACK;
