-- Each retry leaves a row in cyclone.cyclone_audit: action 'retry', the run,
-- the node, the reason and the engine time.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('audited', 1) AS wf \gset
SELECT cyclone.submit('audited') AS run \gset
SELECT is(cyclone_test.fail_node(:'run', 'work'), 'discarded', 'work is discarded');
SELECT cyclone.advance_time('30 minutes') AS t1 \gset
SELECT lives_ok(format('SELECT cyclone.retry(%L, %L, 2, %L)', :'run', 'work', 'SMTP restored'), 'retry with a reason');
SELECT results_eq(format('SELECT run_id, node, action, reason, at FROM cyclone.cyclone_audit WHERE run_id = %L', :'run'),
                  format($$VALUES (%L::uuid, 'work'::text, 'retry'::text, 'SMTP restored'::text, %L::timestamptz)$$, :'run', :'t1'),
                  'one audit row with the action, node, reason and time');
SELECT throws_ok(format('SELECT cyclone.retry(%L, %L, 0, %L)', :'run', 'work', 'twice'), '55000', NULL,
                 'a second retry of the now available step is refused');

SELECT * FROM finish();
ROLLBACK;
