-- A step is claimable once scheduled_at <= now, not a moment before.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, cyclone.now() + interval '1 minute') AS run \gset

SELECT is_empty($$SELECT * FROM cyclone.claim('w1', NULL, 10)$$, 'not claimable before its time');
SELECT cyclone.advance_time('59.999 seconds') AS t1 \gset
SELECT is_empty($$SELECT * FROM cyclone.claim('w1', NULL, 10)$$, 'not claimable 1 ms before its time');
SELECT cyclone.advance_time('1 millisecond') AS t2 \gset
SELECT results_eq($$SELECT run_id, attempt FROM cyclone.claim('w1', NULL, 10)$$,
                  format($$VALUES (%L::uuid, 1)$$, :'run'),
                  'claimable exactly at scheduled_at');
SELECT is(cyclone_test.state(:'run'), 'running', 'and now running');

SELECT * FROM finish();
ROLLBACK;
