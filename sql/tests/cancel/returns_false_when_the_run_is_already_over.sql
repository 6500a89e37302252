-- cancel applies to running and paused runs only: a second cancel, or a cancel
-- of a completed or failed run, returns false and changes nothing.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.define('c1', '[{"name":"x1"}]') AS wf1 \gset
SELECT cyclone_test.define('c2', '[{"name":"x2"}]', 1) AS wf2 \gset
SELECT cyclone_test.define('c3', '[{"name":"x3"}]') AS wf3 \gset
SELECT cyclone.submit('c1') AS done \gset
SELECT cyclone.submit('c2') AS failed \gset
SELECT cyclone.submit('c3') AS paused \gset
SELECT ok(cyclone_test.run_node(:'done', 'x1', '"ok"'), 'one run completes');
SELECT is(cyclone_test.fail_node(:'failed', 'x2'), 'discarded', 'one run fails');
SELECT ok(cyclone.pause(:'paused'), 'one run is paused');

SELECT ok(NOT cyclone.cancel(:'done'), 'cancel of a completed run returns false');
SELECT ok(NOT cyclone.cancel(:'failed'), 'cancel of a failed run returns false');
SELECT ok(cyclone.cancel(:'paused'), 'cancel of a paused run returns true');
SELECT ok(NOT cyclone.cancel(:'paused'), 'a second cancel returns false');
SELECT results_eq(format('SELECT id, state FROM cyclone.cyclone_runs WHERE id IN (%L, %L, %L) ORDER BY state', :'done', :'failed', :'paused'),
                  format($$VALUES (%L::uuid, 'cancelled'::text), (%L, 'completed'), (%L, 'failed')$$, :'paused', :'done', :'failed'),
                  'the completed and failed runs are unchanged');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_audit WHERE action = 'cancel' AND run_id IN (:'done', :'failed', :'paused')), 1,
          'only the cancel that happened is audited');

SELECT * FROM finish();
ROLLBACK;
