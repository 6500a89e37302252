-- SPEC 17: with p_idempotency_window, an idempotency key dedupes only against a run created within that
-- window; an older run of the key no longer does, and the key then names the new run.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('daily');
SELECT cyclone.submit('daily', p_idempotency_key => 'k', p_idempotency_window => '1 hour') AS r1 \gset
SELECT cyclone.advance_time('59 minutes');
SELECT is(cyclone.submit('daily', p_idempotency_key => 'k', p_idempotency_window => '1 hour'), :'r1'::uuid,
          'within the window: the same run');
SELECT cyclone.advance_time('2 minutes');
SELECT cyclone.submit('daily', p_idempotency_key => 'k', p_idempotency_window => '1 hour') AS r2 \gset
SELECT isnt(:'r2'::uuid, :'r1'::uuid, 'past the window: a new run');
SELECT is((SELECT run_id FROM cyclone.cyclone_run_keys WHERE workflow = 'daily' AND key = 'k'), :'r2'::uuid,
          'the key names the new run');
SELECT is(cyclone.submit('daily', p_idempotency_key => 'k'), :'r2'::uuid,
          'a submit without a window dedupes against the new run');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs WHERE workflow = 'daily'), 2, 'two runs in all');

SELECT * FROM finish();
ROLLBACK;
