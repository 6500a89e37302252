-- SPEC 13: tick submits a due slot once: idempotency key schedule:<name>@<slot
-- in UTC>, input p_input with scheduled_for set to that timestamp (overwriting
-- one given), deadline p_deadline; its result counts it under "scheduled".
BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('st') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:00+00');
SELECT cyclone.schedule('daily', '0 3 * * *', 'st', '{"report": "x", "scheduled_for": "given"}', 'Europe/Berlin',
                        'skip', '1 hour', '2 hours');
SELECT is((SELECT (cyclone.tick() ->> 'scheduled')::int), 0, 'nothing due yet');
SELECT cyclone_test.travel_to('2030-01-08 02:00:30+00');
SELECT cyclone.tick() AS t \gset
SELECT is((:'t'::jsonb ->> 'scheduled')::int, 1, 'the 03:00 Berlin slot (02:00 UTC) fired');
SELECT is((:'t'::jsonb ->> 'skipped_slots')::int, 0, 'and nothing was skipped');
SELECT results_eq($$SELECT idempotency_key, input, deadline_at FROM cyclone.cyclone_runs$$,
    $$VALUES ('schedule:daily@2030-01-08T02:00:00Z',
              '{"report": "x", "scheduled_for": "2030-01-08T02:00:00Z"}'::jsonb,
              timestamptz '2030-01-08 04:00:30+00')$$,
    'key and scheduled_for are the slot in UTC; scheduled_for overwrites the given one; deadline from submission');
SELECT results_eq($$SELECT next_fire_at, last_slot, last_run_id FROM cyclone.cyclone_v_schedules$$,
    $$SELECT timestamptz '2030-01-09 02:00+00', timestamptz '2030-01-08 02:00+00', id FROM cyclone.cyclone_runs$$,
    'the view shows the next slot and the run of the last one');
SELECT is((SELECT (cyclone.tick() ->> 'scheduled')::int), 0, 'a second tick fires nothing');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_runs), 1, 'one run for the slot');
SELECT is((SELECT state FROM cyclone.cyclone_steps), 'available', 'whose step is ready to claim');

SELECT * FROM finish();
ROLLBACK;
