-- Issue 30, finding 3: submit(p_run_at => '-infinity') was stored, and metrics() then failed for everyone
-- (22008, cannot subtract infinite timestamps); 'infinity' was a run that never came due. p_run_at must
-- be within 100 years of cyclone.now(): an infinity or a time further away raises 22023 naming p_run_at
-- and writes nothing. A time in the past (within the range) is due at once.
BEGIN;
SELECT plan(10);

SELECT cyclone_test.one_step('one');

SELECT throws_ok($$SELECT cyclone.submit('one', '{}', p_run_at => '-infinity')$$, '22023',
                 'submit: p_run_at must be within 100 years of now (got -infinity)',
                 '-infinity raises 22023 naming p_run_at');
SELECT throws_ok($$SELECT cyclone.submit('one', '{}', p_run_at => 'infinity')$$, '22023', NULL,
                 'infinity raises 22023');
SELECT throws_ok($$SELECT cyclone.submit('one', '{}', p_run_at => cyclone.now() + interval '100 years 1 second')$$,
                 '22023', NULL, 'just over 100 years ahead raises 22023');
SELECT throws_ok($$SELECT cyclone.submit('one', '{}', p_run_at => cyclone.now() - interval '100 years 1 second')$$,
                 '22023', NULL, 'just over 100 years ago raises 22023');
SELECT throws_ok($$SELECT cyclone.submit('one', '{}', p_run_at => '4713-01-01 BC')$$, '22023', NULL,
                 'the first day PostgreSQL holds raises 22023');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 0, 'no run was written');
SELECT lives_ok($$SELECT * FROM cyclone.metrics()$$, 'metrics() answers');

SELECT cyclone.submit('one', '{}', p_run_at => cyclone.now() + interval '100 years') AS later \gset
SELECT is((cyclone_test.step(:'later')).scheduled_at, cyclone.now() + interval '100 years',
          'exactly 100 years ahead is accepted, due then');
SELECT cyclone.submit('one', '{}', p_run_at => cyclone.now() - interval '100 years') AS past \gset
SELECT is((cyclone_test.step(:'past')).state, 'available', 'exactly 100 years ago is accepted: available');
SELECT lives_ok($$SELECT * FROM cyclone.metrics()$$, 'metrics() answers with both runs stored');

SELECT * FROM finish();
ROLLBACK;
