-- max_attempts (workflow or node) must be a positive integer: zero, negative, fractional or a string raise 22023.
BEGIN;
SELECT plan(9);

SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "max_attempts": 0}]}')$$,
                 '22023', NULL, 'node max_attempts 0');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "max_attempts": -3}]}')$$,
                 '22023', NULL, 'node max_attempts -3');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "max_attempts": 2.5}]}')$$,
                 '22023', NULL, 'node max_attempts 2.5 (not an integer)');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "max_attempts": "5"}]}')$$,
                 '22023', NULL, 'node max_attempts "5" (a string)');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"max_attempts": 0, "nodes": [{"name": "a"}]}')$$,
                 '22023', NULL, 'workflow max_attempts 0');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"max_attempts": 1.5, "nodes": [{"name": "a"}]}')$$,
                 '22023', NULL, 'workflow max_attempts 1.5');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT lives_ok($$SELECT cyclone.define_workflow('ok', '{"max_attempts": 1, "nodes": [{"name": "a", "max_attempts": 2.0}]}')$$,
                'max_attempts 1 and 2.0 (an integral number) are accepted');
CREATE TEMP TABLE t AS SELECT cyclone.submit('ok') AS run_id;
SELECT is((SELECT max_attempts FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM t)), 2,
          'max_attempts 2.0 gives steps max_attempts 2');
SELECT * FROM finish();
ROLLBACK;
