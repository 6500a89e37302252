-- In a batch of 64 or more, a run of one step without a parent ends in the complete_many that completes its
-- step, and both rows go straight to today's history tables (_complete_solo_runs, issue #32): nothing stays
-- in the live tables or the archive queue, and the rows read exactly as the usual way (complete, then
-- archive) leaves them. A smaller batch takes the usual way.
BEGIN;
SELECT plan(11);

SELECT cyclone_test.one_step('solo', 1) \gset
SELECT cyclone.tick() \gset
SELECT cyclone.submit('solo', '{"n": 1}') AS fast \gset
SELECT cyclone.submit('solo', '{"n": 1}') AS usual \gset
SELECT count(*) FROM (SELECT cyclone.submit('solo', '{"n": 2}') FROM generate_series(1, 63)) f \gset
CREATE TEMP TABLE c AS SELECT * FROM cyclone.claim('w1', NULL, 100);
SELECT is((SELECT count(*)::int FROM c), 65, 'every step claimed');

-- Every step but the usual one's, in one batch of 64: each output {"v": 7}.
SELECT is((SELECT count(*)::int FROM cyclone.complete_many('w1',
              (SELECT array_agg(step_id ORDER BY step_id) FROM c WHERE run_id <> :'usual'),
              (SELECT array_agg(lease_generation ORDER BY step_id) FROM c WHERE run_id <> :'usual'),
              (SELECT array_agg('{"v": 7}'::jsonb) FROM c WHERE run_id <> :'usual')) m WHERE m.accepted),
          64, 'complete_many accepts the 64');
SELECT ok(cyclone_test.archived(:'fast'), 'a run of the batch is in a day table at once');
SELECT is((SELECT s.tableoid::regclass::text FROM cyclone.cyclone_steps s WHERE s.run_id = :'fast'),
          (SELECT h.steps::text FROM cyclone.cyclone_history h WHERE h.day = (cyclone.now() AT TIME ZONE 'UTC')::date),
          'its step in today''s steps table');
SELECT is((SELECT count(*)::int FROM ONLY cyclone.cyclone_runs), 1, 'only the usual run is left in the live table');
SELECT is_empty('SELECT 1 FROM cyclone.cyclone_archive_queue', 'nothing is queued');
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

-- A batch of 63: the usual way, every run completed in the live table and queued for archive().
SELECT count(*) FROM (SELECT cyclone.submit('solo') FROM generate_series(1, 63)) f \gset
CREATE TEMP TABLE d AS SELECT * FROM cyclone.claim('w1', NULL, 100);
SELECT count(*) FROM cyclone.complete_many('w1', (SELECT array_agg(step_id) FROM d),
                                           (SELECT array_agg(lease_generation) FROM d),
                                           (SELECT array_agg('{}'::jsonb) FROM d)) \gset
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_archive_queue), 63,
          'a batch of 63 completes in the live table, queued for archive()');

SELECT * FROM finish();
ROLLBACK;
