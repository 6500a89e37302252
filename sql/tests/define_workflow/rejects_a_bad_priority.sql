-- priority must be an integer (smaller is claimed first; negative is fine):
-- a fraction or a string raises 22023; an integral 3.0 is accepted as 3.
BEGIN;
SELECT plan(5);

SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "priority": 1.5}]}')$$,
                 '22023', NULL, 'priority 1.5');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "priority": "high"}]}')$$,
                 '22023', NULL, 'priority "high"');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT lives_ok($$SELECT cyclone.define_workflow('ok', '{"nodes": [{"name": "a", "priority": 3.0}, {"name": "b", "priority": -2}]}')$$,
                'priority 3.0 and -2 are accepted');
CREATE TEMP TABLE t AS SELECT cyclone.submit('ok') AS run_id;
SELECT results_eq($$SELECT node, priority FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM t) ORDER BY node$$,
                  $$VALUES ('a'::text, 3), ('b'::text, -2)$$, 'the steps carry priorities 3 and -2');

SELECT * FROM finish();
ROLLBACK;
