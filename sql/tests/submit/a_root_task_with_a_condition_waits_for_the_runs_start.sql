-- A run submitted with p_run_at (or debounced, SPEC 17) starts then: a root task with a condition, reached at
-- submit, is due at the run's start as a plain root task is, not at once.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.define('later_if', '[{"name": "go", "handler": "later_if", "when": {"input": {"go": true}}}]');
SELECT cyclone.submit('later_if', '{"go": true}', p_run_at => cyclone.now() + interval '1 hour') AS run \gset
SELECT is((cyclone_test.step(:'run', 'go')).scheduled_at, cyclone.now() + interval '1 hour',
          'a conditional root task is due at p_run_at');
SELECT cyclone.submit('later_if', '{"go": true}', p_debounce_key => 'k', p_debounce => '10 minutes') AS deb \gset
SELECT is((cyclone_test.step(:'deb', 'go')).scheduled_at, cyclone.now() + interval '10 minutes',
          'and at a debounced run''s start');
SELECT is(cyclone_test.claim_count(), 0, 'neither is claimable now');

SELECT * FROM finish();
ROLLBACK;
