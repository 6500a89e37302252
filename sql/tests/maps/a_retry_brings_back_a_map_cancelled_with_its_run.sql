-- SPEC 9 and 16: a map waiting on its items when another step fails the run is cancelled with its items; the
-- retry that revives the run brings the map back waiting, with its cancelled items available again (its
-- completed ones keep their outputs), not reached a second time.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('fan_x', '[{"name": "each", "kind": "map", "over": "input.items", "handler": "fx_each"},
                                      {"name": "x", "handler": "fx_x"}]', 1);
SELECT cyclone.submit('fan_x', '{"items": [1, 2]}') AS run \gset
SELECT cyclone.complete(c.step_id, 'w1', c.lease_generation, '"one"')
  FROM cyclone.claim('w1', ARRAY['fx_each'], 1) c;
SELECT cyclone_test.fail_node(:'run', 'x', 'permanent');
SELECT is(cyclone_test.state(:'run', 'each'), 'cancelled', 'the run failed and cancelled the waiting map');

SELECT lives_ok(format($$SELECT cyclone.retry(%L, 'x')$$, :'run'), 'the retry that revives the run succeeds');
SELECT is(cyclone_test.state(:'run', 'each'), 'waiting', 'the map is back waiting');
SELECT is(ARRAY(SELECT state FROM cyclone.cyclone_steps WHERE run_id = :'run' AND node = 'each'
                   AND item_index IS NOT NULL ORDER BY item_index), ARRAY['completed', 'available'],
          'its completed item kept, its cancelled one available again (no item made twice)');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
