-- With a floor, a claim reads the floor's priority from the floor, then (while it is short) below the floor,
-- then the priorities after the floor's: each step in claim order, a lower priority's last.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS a1 \gset
SELECT cyclone.submit('one') AS a2 \gset
SELECT cyclone.advance_time('5 seconds') AS t \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
-- After the tick: a lower priority (a larger number), and a step of the floor's priority below the floor.
SELECT cyclone.submit('one', '{}', NULL, NULL, NULL, NULL, 5) AS low \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, cyclone.now() - interval '1 hour') AS past \gset
SELECT cyclone.submit('one') AS a3 \gset

CREATE TEMP TABLE batch (seq serial, run_id uuid);
INSERT INTO batch (run_id) SELECT run_id FROM cyclone.claim('w1', NULL, 10);
SELECT is((SELECT array_agg(run_id ORDER BY seq) FROM batch), ARRAY[:'past', :'a1', :'a2', :'a3', :'low']::uuid[],
          'below the floor, from the floor, then the lower priority: claim order');

-- The same with a worker's filters (the other spelling of each range).
SELECT cyclone.submit('one') AS b1 \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, NULL, NULL, 5) AS low2 \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, cyclone.now() - interval '2 hours') AS past2 \gset
TRUNCATE batch;
INSERT INTO batch (run_id) SELECT run_id FROM cyclone.claim('w1', ARRAY['work'], 10, '30 seconds', ARRAY['one']);
SELECT is((SELECT array_agg(run_id ORDER BY seq) FROM batch), ARRAY[:'past2', :'b1', :'low2']::uuid[],
          'the same order with handlers and workflows named');

SELECT * FROM finish();
ROLLBACK;
