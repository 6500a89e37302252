-- One sweep over a reclaim, a timeout retry and a reclaim-limit discard returns
-- one row (step_id, run_id, node, action) per step; live leases are left alone.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.define('a', '[{"name":"lost","handler":"h_a"}]') AS wf1 \gset
SELECT cyclone_test.define('b', '[{"name":"slow","handler":"h_b","timeout":"5 seconds"}]') AS wf2 \gset
SELECT cyclone_test.define('c', '[{"name":"flaky","handler":"h_c"}]') AS wf3 \gset
SELECT cyclone_test.define('d', '[{"name":"fine","handler":"h_d"}]') AS wf4 \gset
SELECT cyclone.submit('a') AS ra \gset
SELECT cyclone.submit('b') AS rb \gset
SELECT cyclone.submit('c') AS rc \gset
SELECT cyclone.submit('d') AS rd \gset

-- c has already been reclaimed once.
SELECT step_id AS sc FROM cyclone_test.claim_node(:'rc', 'flaky', 'w1', '1 second') \gset
SELECT cyclone.advance_time('2 seconds') AS t0 \gset
SELECT is((SELECT action FROM cyclone.sweep(1)), 'reclaimed', 'setup: c is reclaimed once');

SELECT step_id AS sa FROM cyclone_test.claim_node(:'ra', 'lost', 'w1', '3 seconds') \gset
SELECT step_id AS sb FROM cyclone_test.claim_node(:'rb', 'slow', 'w1', '60 seconds') \gset
SELECT step_id AS sc2 FROM cyclone_test.claim_node(:'rc', 'flaky', 'w1', '3 seconds') \gset
SELECT step_id AS sd FROM cyclone_test.claim_node(:'rd', 'fine', 'w1', '60 seconds') \gset
SELECT cyclone.advance_time('6 seconds') AS t1 \gset

SELECT set_eq($$SELECT step_id, run_id, node, action FROM cyclone.sweep(1)$$,
              format($$VALUES (%s::bigint, %L::uuid, 'lost'::text, 'reclaimed'::text),
                              (%s::bigint, %L::uuid, 'slow'::text, 'retried'::text),
                              (%s::bigint, %L::uuid, 'flaky'::text, 'discarded'::text)$$,
                     :sa, :'ra', :sb, :'rb', :sc, :'rc'),
              'one row per handled step, with its run, node and action');
SELECT is(cyclone_test.state(:'rd', 'fine'), 'running', 'the step with a live lease is left running');

SELECT * FROM finish();
ROLLBACK;
