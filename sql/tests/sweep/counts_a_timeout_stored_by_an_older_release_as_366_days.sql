-- A step timeout an older release stored beyond today's bound (366 days, define_workflow) counts as the
-- bound: sweep and the tick answer instead of failing with a raw 22008 (timestamp out of range) while the
-- step runs, and the step times out once 366 days have passed. The value is written directly, as that
-- release let define_workflow write it.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('one', 3, '10 seconds') AS wf \gset
SELECT cyclone.submit('one') AS run \gset
SELECT step_id, lease_generation AS gen FROM cyclone_test.claim_node(:'run', 'work', 'w1', '1 day') \gset
UPDATE cyclone.cyclone_steps SET timeout = '300000 years' WHERE id = :step_id;

SELECT lives_ok($$SELECT * FROM cyclone.sweep()$$, 'sweep answers');
SELECT lives_ok($$SELECT cyclone.tick()$$, 'the tick answers');
SELECT is_empty($$SELECT * FROM cyclone.sweep()$$, 'the step is not timed out: its lease is valid');
SELECT cyclone.advance_time('366 days 1 second');
SELECT results_eq($$SELECT action FROM cyclone.sweep()$$, $$VALUES ('retried'::text)$$,
                  'past 366 days it times out, and is retried');
SELECT is((cyclone_test.step(:'run')).error_kind, 'timeout', 'as a timeout');

SELECT * FROM finish();
ROLLBACK;
