-- SPEC 16: "until" is a path to an ISO 8601 timestamp; a past timestamp completes the sleep at once; a value
-- that is not a timestamp (or nothing) discards the sleep with error kind bad_input, and the failure policy
-- applies.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('later', '[{"name": "wait_for_it", "kind": "sleep", "until": "input.send_at"},
                                      {"name": "send", "deps": ["wait_for_it"]}]');
SELECT cyclone.submit('later', jsonb_build_object('send_at', cyclone.now() + interval '2 hours')) AS run \gset
SELECT is(cyclone_test.state(:'run', 'wait_for_it'), 'waiting', 'a root sleep sleeps from submit');
SELECT is((cyclone_test.step(:'run', 'wait_for_it')).scheduled_at, cyclone.now() + interval '2 hours',
          'until the timestamp');

SELECT cyclone.submit('later', '{"send_at": "2001-01-01T00:00:00Z"}') AS past \gset
SELECT is(cyclone_test.state(:'past', 'wait_for_it'), 'completed', 'a past timestamp completes at once');
SELECT is(cyclone_test.state(:'past', 'send'), 'available', 'and the DAG goes on');

SELECT cyclone.submit('later', '{"send_at": "tomorrow-ish"}') AS bad \gset
SELECT is((cyclone_test.step(:'bad', 'wait_for_it')).error_kind, 'bad_input', 'not a timestamp: bad_input');
SELECT is(cyclone_test.run_state(:'bad'), 'failed', 'the failure policy applies');
SELECT cyclone.submit('later', '{}') AS missing \gset
SELECT is((cyclone_test.step(:'missing', 'wait_for_it')).error_kind, 'bad_input', 'nothing there: bad_input');

SELECT * FROM finish();
ROLLBACK;
