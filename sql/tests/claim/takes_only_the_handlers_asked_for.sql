BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('h', '[{"name":"a","handler":"ha"},{"name":"b","handler":"hb"},{"name":"c","handler":"hc"}]') AS wf \gset
SELECT cyclone.submit('h') AS run \gset

SELECT is_empty($$SELECT * FROM cyclone.claim('w1', ARRAY['nope'], 10)$$, 'an unknown handler claims nothing');
SELECT is_empty($$SELECT * FROM cyclone.claim('w1', ARRAY[]::text[], 10)$$, 'an empty handler list claims nothing');
SELECT results_eq($$SELECT node, handler FROM cyclone.claim('w1', ARRAY['hb'], 10)$$,
                  $$VALUES ('b'::text, 'hb'::text)$$, 'ARRAY[hb] claims only b');
SELECT is(cyclone_test.state(:'run', 'a'), 'available', 'a is left available');
SELECT is(cyclone_test.state(:'run', 'c'), 'available', 'c is left available');
SELECT set_eq($$SELECT node FROM cyclone.claim('w1', ARRAY['hc', 'ha'], 10)$$,
              $$VALUES ('a'), ('c')$$, 'several handlers claim each of them');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE run_id = :'run' AND state = 'running'), 3,
          'all three are running now');

SELECT cyclone.submit('h') AS run2 \gset
SELECT set_eq($$SELECT node FROM cyclone.claim('w1', NULL, 10)$$,
              $$VALUES ('a'), ('b'), ('c')$$, 'p_handlers NULL claims any handler');

SELECT * FROM finish();
ROLLBACK;
