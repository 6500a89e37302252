-- A step below the floor is never left while a claim finds fewer steps than it asks for past the floor: the
-- part below the floor is read then too, and its steps come in claim order, before the floor's.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS a \gset
SELECT cyclone.advance_time('5 seconds') AS t \gset
SELECT count(*) AS n FROM cyclone.claim('w1', NULL, 1) \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, cyclone.now() - interval '1 hour') AS past \gset

SELECT is((SELECT array_agg(run_id) FROM cyclone.claim('w1', NULL, 5)), ARRAY[:'past']::uuid[],
          'nothing due past the floor: the step below it is claimed at once');

SELECT cyclone.submit('one') AS b \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, cyclone.now() - interval '2 hours') AS older \gset
CREATE TEMP TABLE batch (seq serial, run_id uuid);
INSERT INTO batch (run_id) SELECT run_id FROM cyclone.claim('w1', NULL, 5);
SELECT is((SELECT array_agg(run_id ORDER BY seq) FROM batch), ARRAY[:'older', :'b']::uuid[],
          'a short batch takes both, in claim order');
SELECT is((SELECT count(*) FROM cyclone.cyclone_steps WHERE state = 'available'), 0::bigint, 'none is left');

SELECT * FROM finish();
ROLLBACK;
