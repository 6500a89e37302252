-- timeout and max_wait must be positive interval strings: garbage, a number, zero or a negative interval raise 22023.
BEGIN;
SELECT plan(7);

SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "timeout": "soon"}]}')$$,
                 '22023', NULL, 'timeout "soon" is not an interval');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "timeout": 30}]}')$$,
                 '22023', NULL, 'timeout 30 (a number, not an interval string)');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "timeout": "-5 seconds"}]}')$$,
                 '22023', NULL, 'a negative timeout');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "a", "timeout": "0 seconds"}]}')$$,
                 '22023', NULL, 'a zero timeout');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "w", "kind": "wait", "max_wait": "1 fortnight"}]}')$$,
                 '22023', NULL, 'max_wait "1 fortnight" is not an interval');
SELECT throws_ok($$SELECT cyclone.define_workflow('bad', '{"nodes": [{"name": "w", "kind": "wait", "max_wait": "-1 hour"}]}')$$,
                 '22023', NULL, 'a negative max_wait');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name = 'bad'), 0, 'nothing was written');
SELECT * FROM finish();
ROLLBACK;
