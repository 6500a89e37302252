-- SPEC 13: skip (a slot whose schedule still has a run running or paused is
-- skipped), allow (always submit), cancel_other (cancel the schedule's
-- unfinished runs, then submit).
BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('sv') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:00:30+00');
SELECT cyclone.schedule('skip', '* * * * *', 'sv', '{}', 'UTC', 'skip');
SELECT cyclone.schedule('allow', '* * * * *', 'sv', '{}', 'UTC', 'allow');
SELECT cyclone.schedule('cancel', '* * * * *', 'sv', '{}', 'UTC', 'cancel_other');
SELECT cyclone.advance_time('1 minute');
SELECT is((cyclone.tick() ->> 'scheduled')::int, 3, '10:01: each fires');
SELECT cyclone.advance_time('1 minute');
SELECT cyclone.tick() AS t \gset
SELECT is((:'t'::jsonb ->> 'scheduled')::int, 2, '10:02: allow and cancel_other fire');
SELECT is((:'t'::jsonb ->> 'skipped_slots')::int, 1, 'skip skips: its 10:01 run is still running');
SELECT results_eq($$SELECT scheduled_for, state FROM cyclone_test.schedule_runs('cancel')$$,
                  $$VALUES ('2030-01-07T10:01:00Z', 'cancelled'), ('2030-01-07T10:02:00Z', 'running')$$,
                  'cancel_other cancelled the running run, then submitted');
SELECT is((SELECT reason FROM cyclone.cyclone_audit WHERE action = 'cancel'),
          'schedule "cancel": slot 2030-01-07T10:02:00Z (overlap cancel_other)', 'and said why in the audit trail');
SELECT is((SELECT count(*)::int FROM cyclone_test.schedule_runs('allow') WHERE state = 'running'), 2,
          'allow runs both');

-- A paused run still counts as unfinished; a finished one does not.
SELECT cyclone.pause(r.id) FROM cyclone.cyclone_runs r WHERE r.idempotency_key = 'schedule:skip@2030-01-07T10:01:00Z';
SELECT cyclone.advance_time('1 minute');
SELECT cyclone.tick();
SELECT is((SELECT count(*)::int FROM cyclone_test.schedule_runs('skip')), 1, 'paused: 10:03 skipped');
SELECT cyclone.cancel(r.id) FROM cyclone.cyclone_runs r WHERE r.idempotency_key = 'schedule:skip@2030-01-07T10:01:00Z';
SELECT cyclone.advance_time('1 minute');
SELECT cyclone.tick();
SELECT results_eq($$SELECT scheduled_for FROM cyclone_test.schedule_runs('skip')$$,
                  $$VALUES ('2030-01-07T10:01:00Z'), ('2030-01-07T10:04:00Z')$$, 'finished: 10:04 fires');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_schedule_runs WHERE schedule = 'skip' AND open), 1,
          'the finished run''s row is closed');

SELECT * FROM finish();
ROLLBACK;
