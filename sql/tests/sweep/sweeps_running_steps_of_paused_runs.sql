-- A crashed worker's lease expires whatever the run's state: the sweep acts on
-- running steps of paused runs (reclaims and timeouts), and the result waits
-- for the resume to be claimed.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('lease', '[{"name":"work","handler":"h_lease"}]') AS wf1 \gset
SELECT cyclone_test.define('slow', '[{"name":"work","handler":"h_slow","timeout":"5 seconds"}]') AS wf2 \gset
SELECT cyclone.submit('lease') AS r_lease \gset
SELECT cyclone.submit('slow') AS r_slow \gset
SELECT step_id AS s_lease FROM cyclone_test.claim_node(:'r_lease', 'work', 'w1', '3 seconds') \gset
SELECT step_id AS s_slow FROM cyclone_test.claim_node(:'r_slow', 'work', 'w1', '60 seconds') \gset
SELECT cyclone.pause(:'r_lease') AND cyclone.pause(:'r_slow') AS paused \gset
SELECT cyclone.advance_time('6 seconds') AS t1 \gset

SELECT set_eq($$SELECT step_id, action FROM cyclone.sweep()$$,
              format($$VALUES (%s::bigint, 'reclaimed'::text), (%s::bigint, 'retried'::text)$$, :s_lease, :s_slow),
              'the expired lease is reclaimed and the timed-out step retried, though both runs are paused');
SELECT is(cyclone_test.state(:'r_lease'), 'available', 'the reclaimed step is available');
SELECT is(cyclone_test.state(:'r_slow'), 'available', 'the timed-out step is available');
SELECT is(ARRAY[cyclone_test.run_state(:'r_lease'), cyclone_test.run_state(:'r_slow')], ARRAY['paused', 'paused'],
          'both runs stay paused');
SELECT cyclone.advance_time('2 seconds') AS t2 \gset
SELECT is_empty($$SELECT * FROM cyclone.claim('w2', NULL, 10)$$, 'neither is claimed while paused');

SELECT ok(cyclone.resume(:'r_lease') AND cyclone.resume(:'r_slow'), 'resume both');
SELECT results_eq($$SELECT handler, attempt FROM cyclone.claim('w2', NULL, 10) ORDER BY handler$$,
                  $$VALUES ('h_lease'::text, 1), ('h_slow'::text, 2)$$,
                  'after resume: the reclaimed step re-runs attempt 1, the timed-out one runs attempt 2');
SELECT is((cyclone_test.step(:'r_lease')).reclaims, 1, 'the reclaim was counted');

SELECT * FROM finish();
ROLLBACK;
