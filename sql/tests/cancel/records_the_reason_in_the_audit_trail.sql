-- A cancel leaves a row in cyclone.cyclone_audit: action 'cancel', the reason,
-- the engine time, no node.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.one_step('aud', 3) AS wf \gset
SELECT cyclone.submit('aud') AS run \gset
SELECT cyclone.advance_time('90 seconds') AS t1 \gset
SELECT ok(cyclone.cancel(:'run', 'duplicate order'), 'cancel');
SELECT results_eq(format('SELECT run_id, node, action, reason, at FROM cyclone.cyclone_audit WHERE run_id = %L', :'run'),
                  format($$VALUES (%L::uuid, NULL::text, 'cancel'::text, 'duplicate order'::text, %L::timestamptz)$$, :'run', :'t1'),
                  'one audit row with the reason and time');

SELECT * FROM finish();
ROLLBACK;
