-- SPEC 13: tick submits due slots oldest first across schedules, at most 100 a
-- call; the rest wait for the next call.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('sm') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:00:30+00');
SELECT cyclone.schedule('a', '* * * * *', 'sm', '{}', 'UTC', 'allow', '1 day');
SELECT cyclone.schedule('b', '*/2 * * * *', 'sm', '{}', 'UTC', 'allow', '1 day');
SELECT cyclone_test.travel_to('2030-01-07 12:00:30+00');  -- due: a 120, b 60
SELECT is((cyclone.tick() ->> 'scheduled')::int, 100, 'the first call: 100');
SELECT is((SELECT max(input ->> 'scheduled_for') FROM cyclone.cyclone_runs), '2030-01-07T11:07:00Z',
          'the 100 oldest slots: a and b interleaved up to 11:07');
SELECT is((cyclone.tick() ->> 'scheduled')::int, 80, 'the second call: the other 80');
SELECT is((cyclone.tick() ->> 'scheduled')::int, 0, 'then none');
SELECT is((SELECT count(DISTINCT idempotency_key)::int FROM cyclone.cyclone_runs), 180, 'each slot once');

SELECT * FROM finish();
ROLLBACK;
