-- check_invariants() and the views read whatever times are stored: steps due at '-infinity' and
-- 'infinity' (a p_run_at an older release accepted) and a schedule whose next slot is 'infinity' break no
-- rule and fail no read. The times are written directly, as that release let submit write them.
BEGIN;
SELECT plan(6);

SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('one') AS early \gset
SELECT cyclone.submit('one') AS never \gset
UPDATE cyclone.cyclone_steps SET scheduled_at = '-infinity' WHERE run_id = :'early';
UPDATE cyclone.cyclone_steps SET scheduled_at = 'infinity' WHERE run_id = :'never';
SELECT cyclone.schedule('done', '@daily', 'one');
UPDATE cyclone.cyclone_schedules SET next_fire_at = 'infinity' WHERE name = 'done';

SELECT is_empty($$SELECT * FROM cyclone.check_invariants()$$, 'check_invariants() answers: no rule broken');
SELECT lives_ok($$SELECT * FROM cyclone.cyclone_v_steps$$, 'cyclone_v_steps answers');
SELECT lives_ok($$SELECT * FROM cyclone.cyclone_v_runs$$, 'cyclone_v_runs answers');
SELECT lives_ok($$SELECT * FROM cyclone.cyclone_v_limits$$, 'cyclone_v_limits answers');
SELECT is((SELECT next_fire_at FROM cyclone.cyclone_v_schedules WHERE name = 'done'), 'infinity'::timestamptz,
          'cyclone_v_schedules shows the schedule');
SELECT lives_ok($$SELECT cyclone.tick()$$, 'tick answers');

SELECT * FROM finish();
ROLLBACK;
