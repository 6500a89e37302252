-- A wait node discarded by max_wait, retried, waits again from now with its
-- whole max_wait, and a signal then completes it and the run.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('approve', '[{"name":"approval","kind":"wait","signal":"approved","max_wait":"1 hour"}]') AS wf \gset
SELECT cyclone.submit('approve') AS run \gset
SELECT cyclone.advance_time('61 minutes') AS t1 \gset
SELECT is((cyclone.tick() ->> 'max_wait')::int, 1, 'tick discards the expired wait');
SELECT results_eq(format('SELECT state, error_kind FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('failed'::text, 'max_wait'::text)$$, 'the run failed on max_wait');

SELECT cyclone.advance_time('1 day') AS t2 \gset
SELECT lives_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'approval'), 'retry the wait node');
SELECT results_eq(format('SELECT state, started_at, wait_expires_at, error FROM cyclone.cyclone_steps WHERE run_id = %L', :'run'),
                  format($$VALUES ('waiting'::text, %L::timestamptz, %L::timestamptz + interval '1 hour', NULL::text)$$, :'t2', :'t2'),
                  'the node waits again, reached now, expiring one hour from now');
SELECT is((cyclone.tick() ->> 'max_wait')::int, 0, 'it does not expire at once');
SELECT ok(cyclone.signal(:'run', 'approved', '{"by": "ops"}'), 'the signal arrives');
SELECT results_eq(format('SELECT state, output FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('completed'::text, '{"approval": {"by": "ops"}}'::jsonb)$$, 'the run completes');

SELECT * FROM finish();
ROLLBACK;
