-- Cancelling a parent cancels the child run its child node waits on, in the same
-- transaction; the node itself is cancelled, not discarded as child_failed.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('kid', '[{"name":"kidwork"}]') AS kwf \gset
SELECT cyclone_test.define('parent', '[{"name":"inv","kind":"child","workflow":"kid"}]') AS pwf \gset
SELECT cyclone.submit('parent') AS run \gset
SELECT (cyclone_test.step(:'run', 'inv')).child_run_id AS child \gset
SELECT * FROM cyclone_test.claim_node(:'child', 'kidwork') \gset k_

SELECT ok(cyclone.cancel(:'run', 'stop'), 'the parent is cancelled');
SELECT results_eq(format('SELECT state, error_kind, error FROM cyclone.cyclone_steps WHERE run_id = %L', :'run'),
                  $$VALUES ('cancelled'::text, 'cancelled'::text, 'run cancelled'::text)$$, 'the child node is cancelled');
SELECT results_eq(format($$SELECT r.state, s.state, s.error FROM cyclone.cyclone_runs r JOIN cyclone.cyclone_steps s ON s.run_id = r.id
                           WHERE r.id = %L$$, :'child'),
                  $$VALUES ('cancelled'::text, 'cancelled'::text, 'run cancelled'::text)$$,
                  'the child run and its running step are cancelled');
SELECT ok(NOT cyclone.renew(:k_step_id, 'w1', :k_lease_generation), 'the child''s worker sees renew return false');

SELECT * FROM finish();
ROLLBACK;
