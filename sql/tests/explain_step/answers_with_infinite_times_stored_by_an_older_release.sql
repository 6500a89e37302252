-- explain_step answers whatever times are stored: a step due at 'infinity' (a p_run_at an older release
-- accepted) is not_due with "until" null (never; the string "infinity" is no time a client can parse), one
-- due at '-infinity' is claimable. The times are written directly, as that release let submit write them.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('one') AS early \gset
SELECT cyclone.submit('one') AS never \gset
UPDATE cyclone.cyclone_steps SET scheduled_at = '-infinity' WHERE run_id = :'early';
UPDATE cyclone.cyclone_steps SET scheduled_at = 'infinity' WHERE run_id = :'never';

SELECT is(cyclone.explain_step((cyclone_test.step(:'never')).id), '{"reason": "not_due", "until": null}'::jsonb,
          'due at infinity: not_due, until null');
SELECT is(cyclone.explain_step((cyclone_test.step(:'early')).id), '{"reason": "claimable", "workers": 0}'::jsonb,
          'due at -infinity: claimable');

SELECT * FROM finish();
ROLLBACK;
