-- finished_per_minute counts the runs that finished in a window by workflow, state and minute of finishing
-- (not of creation), whether they are still in the live table (cyclone_archive_queue) or archived into their
-- day's table; a run finished before the window, or one still running, is not counted.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone_test.travel_to('2030-01-07 09:00+00') \gset
SELECT cyclone.submit('solo') AS early \gset
SELECT cyclone.submit('solo') AS slow \gset
SELECT cyclone.submit('solo') AS failing \gset
SELECT cyclone.submit('solo') AS archived \gset
SELECT cyclone.submit('solo') AS running \gset
-- Each step claimed at 09:00 with a long lease, then ended when the test says.
CREATE TEMP TABLE claimed AS SELECT * FROM cyclone.claim('w1', ARRAY['work'], 10, interval '3 hours');
CREATE FUNCTION pg_temp.finish(p_run uuid, p_ok boolean) RETURNS void LANGUAGE sql AS $$
    SELECT CASE WHEN p_ok THEN cyclone.complete(c.step_id, 'w1', c.lease_generation, '{}')::text
                ELSE cyclone.fail(c.step_id, 'w1', c.lease_generation, 'boom', 'error') END
      FROM pg_temp.claimed c WHERE c.run_id = p_run
$$;
SELECT pg_temp.finish(:'early', true);
SELECT cyclone_test.travel_to('2030-01-07 10:00:30+00') \gset
SELECT pg_temp.finish(:'archived', true);
SELECT is(cyclone.archive(), 2, 'two finished runs leave the live table (one before the window)');
SELECT cyclone_test.travel_to('2030-01-07 10:02:10+00') \gset
SELECT pg_temp.finish(:'slow', true);
SELECT pg_temp.finish(:'failing', false);

SELECT results_eq(
    $$SELECT workflow, state, minute, runs FROM cyclone.finished_per_minute('2030-01-07 10:00+00', '2030-01-07 11:00+00')$$,
    $$VALUES ('solo', 'completed', timestamptz '2030-01-07 10:00+00', 1::bigint),
             ('solo', 'completed', timestamptz '2030-01-07 10:02+00', 1::bigint),
             ('solo', 'failed', timestamptz '2030-01-07 10:02+00', 1::bigint)$$,
    'by the minute each run finished, created an hour before or not, archived or not');
SELECT is((SELECT count(*) FROM cyclone.finished_per_minute('2030-01-07 10:01+00', '2030-01-07 10:02+00')), 0::bigint,
          'a minute when none finished has no row');
SELECT is((SELECT sum(runs) FROM cyclone.finished_per_minute('2030-01-07 08:30+00', '2030-01-07 10:30+00')), 4::numeric,
          'a window over two hours counts the early run too');

SELECT * FROM finish();
ROLLBACK;
