-- A run of one step without a parent ends in the complete_many that completes its step, and both rows go
-- straight to today's history tables (_complete_solo_runs, issue #32): nothing stays in the live tables or
-- the archive queue, and the rows read exactly as the usual way (complete, then archive) leaves them.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone.tick() \gset
SELECT cyclone.submit('solo', '{"n": 1}') AS fast \gset
SELECT cyclone.submit('solo', '{"n": 1}') AS usual \gset
CREATE TEMP TABLE c AS SELECT * FROM cyclone.claim('w1', NULL, 10);
SELECT is((SELECT count(*)::int FROM c), 2, 'both steps claimed');

SELECT results_eq(
    format('SELECT accepted FROM cyclone.complete_many(''w1'', ARRAY[%s]::bigint[], ARRAY[%s]::bigint[], ''{"{\"v\": 7}"}''::jsonb[])',
           (SELECT step_id FROM c WHERE run_id = :'fast'), (SELECT lease_generation FROM c WHERE run_id = :'fast')),
    'VALUES (true)', 'complete_many accepts the step');
SELECT ok(cyclone_test.archived(:'fast'), 'its run is in a day table at once');
SELECT is((SELECT s.tableoid::regclass::text FROM cyclone.cyclone_steps s WHERE s.run_id = :'fast'),
          (SELECT h.steps::text FROM cyclone.cyclone_history h WHERE h.day = (cyclone.now() AT TIME ZONE 'UTC')::date),
          'its step in today''s steps table');
SELECT is_empty(format('SELECT 1 FROM cyclone.cyclone_archive_queue WHERE run_id = %L', :'fast'), 'the run is not queued');
SELECT is((SELECT r.output FROM cyclone.cyclone_runs r WHERE r.id = :'fast'), '{"work": {"v": 7}}'::jsonb,
          'the run''s output: its one node''s');

SELECT ok(cyclone.complete((SELECT step_id FROM c WHERE run_id = :'usual'), 'w1',
                           (SELECT lease_generation FROM c WHERE run_id = :'usual'), '{"v": 7}'), 'the other the usual way');
SELECT cyclone.archive() \gset
-- Every column the same but the ids (and the run's input, the same here).
SELECT is((SELECT to_jsonb(r) - 'id' FROM cyclone.cyclone_runs r WHERE r.id = :'fast'),
          (SELECT to_jsonb(r) - 'id' FROM cyclone.cyclone_runs r WHERE r.id = :'usual'), 'the run rows read the same');
SELECT is((SELECT to_jsonb(s) - 'id' - 'run_id' FROM cyclone.cyclone_steps s WHERE s.run_id = :'fast'),
          (SELECT to_jsonb(s) - 'id' - 'run_id' FROM cyclone.cyclone_steps s WHERE s.run_id = :'usual'),
          'the step rows read the same');

SELECT * FROM finish();
ROLLBACK;
