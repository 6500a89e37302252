-- finished_runs lists the runs that finished in a window, live or archived, newest finish first, of a
-- workflow and a state when given, a page at a time after a (finished_at, id) cursor; a run that finished
-- outside the window or has not finished is not listed. Bad filters are 22023.
BEGIN;
SELECT plan(8);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone_test.define('other', '[{"name": "work"}]', 1) \gset
SELECT cyclone_test.travel_to('2030-01-07 09:00+00') \gset
SELECT cyclone.submit('solo') AS a \gset
SELECT cyclone.submit('solo') AS b \gset
SELECT cyclone.submit('solo') AS c \gset
SELECT cyclone.submit('other') AS d \gset
SELECT cyclone.submit('solo') AS live \gset
CREATE TEMP TABLE claimed AS SELECT * FROM cyclone.claim('w1', ARRAY['work'], 10, interval '3 hours');
CREATE FUNCTION pg_temp.finish(p_run uuid, p_ok boolean) RETURNS void LANGUAGE sql AS $$
    SELECT CASE WHEN p_ok THEN cyclone.complete(c.step_id, 'w1', c.lease_generation, '{}')::text
                ELSE cyclone.fail(c.step_id, 'w1', c.lease_generation, 'boom', 'error') END
      FROM pg_temp.claimed c WHERE c.run_id = p_run
$$;
SELECT cyclone_test.travel_to('2030-01-07 10:01+00') \gset
SELECT pg_temp.finish(:'a', true);
SELECT cyclone.archive() \gset
SELECT cyclone_test.travel_to('2030-01-07 10:02+00') \gset
SELECT pg_temp.finish(:'b', false);
SELECT cyclone_test.travel_to('2030-01-07 10:03+00') \gset
SELECT pg_temp.finish(:'c', true);
SELECT pg_temp.finish(:'d', true);

SELECT results_eq(
    $$SELECT id FROM cyclone.finished_runs('2030-01-07 10:00+00', '2030-01-07 11:00+00', 'solo')$$,
    format($$VALUES (%L::uuid), (%L::uuid), (%L::uuid)$$, :'c', :'b', :'a'),
    'the workflow''s finished runs, newest finish first, the archived one too');
SELECT results_eq(
    $$SELECT id, state FROM cyclone.finished_runs('2030-01-07 10:00+00', '2030-01-07 11:00+00', NULL, 'failed')$$,
    format($$VALUES (%L::uuid, 'failed'::text)$$, :'b'), 'of one state');
SELECT results_eq(
    $$SELECT id FROM cyclone.finished_runs('2030-01-07 10:01:30+00', '2030-01-07 10:02:30+00')$$,
    format($$VALUES (%L::uuid)$$, :'b'), 'only the window''s');
SELECT results_eq(
    format($$SELECT id FROM cyclone.finished_runs('2030-01-07 10:00+00', '2030-01-07 11:00+00', 'solo', NULL, 1,
                                                  '2030-01-07 10:02+00', %L)$$, :'b'),
    format($$VALUES (%L::uuid)$$, :'a'), 'the page after a cursor, one row');
SELECT is((SELECT count(*) FROM cyclone.finished_runs('2030-01-07 10:00+00', '2030-01-07 11:00+00')), 4::bigint,
          'the run still running is not listed');
SELECT throws_ok($$SELECT * FROM cyclone.finished_runs(now() - interval '1 hour', now(), NULL, 'running')$$,
                 '22023', NULL, 'a state that is not a finished one');
SELECT throws_ok($$SELECT * FROM cyclone.finished_runs(now() - interval '1 hour', now(), NULL, NULL, 50, now())$$,
                 '22023', NULL, 'half a cursor');
SELECT throws_ok($$SELECT * FROM cyclone.finished_runs(now() - interval '1 hour', now(), NULL, NULL, 0)$$,
                 '22023', NULL, 'a limit out of range');

SELECT * FROM finish();
ROLLBACK;
