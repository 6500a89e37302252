-- The floor skips only the claimed steps of its own priority: a step of a higher priority (a smaller number)
-- submitted after the tick is claimed before the floor's, in claim order.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone.submit('one') AS low1 \gset
SELECT cyclone.submit('one') AS low2 \gset
SELECT cyclone.advance_time('5 seconds') AS t \gset
SELECT cyclone.tick() IS NOT NULL AS ticked \gset
SELECT cyclone.submit('one', '{}', NULL, NULL, NULL, NULL, -5) AS high \gset

CREATE TEMP TABLE batch (seq serial, run_id uuid);
INSERT INTO batch (run_id) SELECT run_id FROM cyclone.claim('w1', NULL, 2);
SELECT is((SELECT array_agg(run_id ORDER BY seq) FROM batch), ARRAY[:'high', :'low1']::uuid[],
          'the higher priority first, then the floor''s priority from the floor');
SELECT is((SELECT priority FROM cyclone.cyclone_claim_floor WHERE queue_bucket = 0), 0,
          'the floor is left as the tick made it');

SELECT * FROM finish();
ROLLBACK;
