-- SPEC 13 through time travel: ticking every 10 minutes for a day, an hourly
-- schedule fires 24 runs, one per slot, each key once.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('sh') \gset
SELECT cyclone_test.travel_to('2030-01-07 00:05+00');
SELECT cyclone.schedule('hourly', '@hourly', 'sh', '{}', 'UTC', 'allow');
CREATE TEMP TABLE ticks AS SELECT 0 AS scheduled WHERE false;
DO $$
BEGIN
    FOR i IN 1 .. 144 LOOP
        PERFORM cyclone.advance_time('10 minutes');
        INSERT INTO ticks SELECT (cyclone.tick() ->> 'scheduled')::int;
    END LOOP;
END $$;
SELECT is((SELECT sum(scheduled)::int FROM ticks), 24, '24 slots fired');
SELECT is((SELECT count(DISTINCT idempotency_key)::int FROM cyclone_test.schedule_runs('hourly')), 24, '24 distinct keys');
SELECT results_eq($$SELECT min(scheduled_for), max(scheduled_for) FROM cyclone_test.schedule_runs('hourly')$$,
                  $$VALUES ('2030-01-07T01:00:00Z', '2030-01-08T00:00:00Z')$$, 'from 01:00 to midnight');
SELECT is((SELECT count(*)::int FROM ticks WHERE scheduled > 1), 0, 'never two at once');

SELECT * FROM finish();
ROLLBACK;
