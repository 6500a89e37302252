-- SPEC 17: signal_with_start, in one transaction: the run of the workflow and idempotency key (made by submit
-- with p_input when there is none), then signal on it; returns the run's id. A NULL key is 22023; a run of the
-- key that is already terminal is 55000 and nothing is written.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.define('approval', '[
    {"name": "approve", "kind": "wait"},
    {"name": "ship", "handler": "ship", "deps": ["approve"]}]');
SELECT cyclone.signal_with_start('approval', 'order-1', 'approve', '{"by": "ann"}', '{"order": 1}') AS run \gset
SELECT is((SELECT input FROM cyclone.cyclone_runs WHERE id = :'run'), '{"order": 1}'::jsonb, 'made with p_input');
SELECT is((cyclone_test.step(:'run', 'approve')).output, '{"by": "ann"}'::jsonb, 'and signalled: the wait node completed');
SELECT is(cyclone_test.state(:'run', 'ship'), 'available', 'the DAG advanced');
SELECT is(cyclone.signal_with_start('approval', 'order-1', 'approve', '{"by": "bob"}', '{"order": 99}'), :'run'::uuid,
          'the same key: the same run');
SELECT is((SELECT input FROM cyclone.cyclone_runs WHERE id = :'run'), '{"order": 1}'::jsonb, 'its input unchanged');
SELECT throws_ok($$SELECT cyclone.signal_with_start('approval', NULL, 'approve')$$, '22023', NULL, 'a NULL key: 22023');

SELECT cyclone.cancel(:'run');
SELECT (SELECT count(*) FROM cyclone.cyclone_signals) AS signals \gset
SELECT throws_ok($$SELECT cyclone.signal_with_start('approval', 'order-1', 'approve')$$, '55000', NULL,
                 'the key''s run is terminal: 55000');
SELECT is((SELECT count(*) FROM cyclone.cyclone_signals), :'signals'::bigint, 'nothing was written');

SELECT * FROM finish();
ROLLBACK;
