-- A tick looks at no more than 1,000 slots (docs/schedules.md): a month-long
-- outage of a minute schedule is skipped over several ticks, then the latest
-- slot fires; each slot is counted once.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('sl') \gset
SELECT cyclone_test.travel_to('2030-01-07 10:00:30+00');
SELECT cyclone.schedule('m', '* * * * *', 'sl', '{}', 'UTC', 'skip', '0');
SELECT cyclone_test.travel_to('2030-01-07 12:00:30+00');  -- 120 minutes due
SELECT cyclone.advance_time('1 day');                        -- 1,560 minutes due
SELECT cyclone.tick() AS t1 \gset
SELECT is(:'t1'::jsonb -> 'scheduled' || (:'t1'::jsonb -> 'skipped_slots'), '[0, 1000]'::jsonb,
          'the first tick skips 1,000 slots');
SELECT cyclone.tick() AS t2 \gset
SELECT is(:'t2'::jsonb -> 'scheduled' || (:'t2'::jsonb -> 'skipped_slots'), '[1, 559]'::jsonb,
          'the second skips the other 559 and fires the latest');
SELECT results_eq($$SELECT scheduled_for FROM cyclone_test.schedule_runs('m')$$, $$VALUES ('2030-01-08T12:00:00Z')$$,
                  'the latest due slot');
SELECT is((SELECT next_fire_at FROM cyclone.cyclone_v_schedules), timestamptz '2030-01-08 12:01+00', 'next: 12:01');

SELECT * FROM finish();
ROLLBACK;
