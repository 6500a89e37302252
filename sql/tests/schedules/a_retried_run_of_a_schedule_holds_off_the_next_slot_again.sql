-- SPEC 13, overlap skip: a slot whose schedule has a run running or paused is
-- skipped. A run of the schedule that failed, was seen finished by a tick (its
-- row of cyclone_schedule_runs closed) and was then retried is running again:
-- its row opens again and the next slot is skipped. (Until v0.14.0 the row
-- stayed closed and the slot fired beside it.)
BEGIN;
SELECT plan(6);

SELECT cyclone_test.travel_to('2030-01-07 10:30+00');
SELECT cyclone.define_workflow('once', '{"max_attempts": 1, "nodes": [{"name": "a"}]}');
SELECT cyclone.schedule('hourly', '0 * * * *', 'once');
SELECT cyclone.advance_time('1 hour');
SELECT is((cyclone.tick() ->> 'scheduled')::int, 1, '11:00 fired');
SELECT cyclone_test.fail_node(r.id, 'a', 'permanent') FROM cyclone.cyclone_runs r WHERE r.workflow = 'once';
SELECT cyclone.advance_time('1 hour');
SELECT is((cyclone.tick() ->> 'scheduled')::int, 1, '12:00 fired: the 11:00 run failed (its row is closed)');
SELECT ok(NOT (SELECT open FROM cyclone.cyclone_schedule_runs WHERE slot = '2030-01-07 11:00+00'), 'closed');
SELECT cyclone_test.fail_node(r.id, 'a', 'permanent') FROM cyclone.cyclone_runs r
 WHERE r.workflow = 'once' AND r.state = 'running';

SELECT cyclone.retry((SELECT run_id FROM cyclone.cyclone_schedule_runs WHERE slot = '2030-01-07 11:00+00'), 'a', 1);
SELECT ok((SELECT open FROM cyclone.cyclone_schedule_runs WHERE slot = '2030-01-07 11:00+00'), 'retried: open again');
SELECT cyclone.advance_time('1 hour');
SELECT is(cyclone.tick() ->> 'skipped_slots', '1', '13:00 skipped: the retried 11:00 run is running');
SELECT is_empty('SELECT * FROM cyclone.check_invariants()', 'and the engine is consistent');

SELECT * FROM finish();
ROLLBACK;
