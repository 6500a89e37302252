-- A batch claim takes the first p_limit steps in claim order (priority, then
-- scheduled_at, then id) and returns them in that order.
BEGIN;
SELECT plan(2);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone_test.define('prio', '[{"name":"low","handler":"work","priority":5},
                                     {"name":"high","handler":"work","priority":-1},
                                     {"name":"mid","handler":"work"}]') AS wf2 \gset
CREATE TEMP TABLE runs (label text, id uuid);
INSERT INTO runs SELECT 'A', cyclone.submit('one', '{}', NULL, NULL, cyclone.now() + interval '10 seconds');
INSERT INTO runs SELECT 'B', cyclone.submit('one');
INSERT INTO runs SELECT 'P', cyclone.submit('prio');
SELECT cyclone.advance_time('20 seconds') AS t \gset

CREATE TEMP TABLE batch (seq serial, run_id uuid, node text);
INSERT INTO batch (run_id, node) SELECT run_id, node FROM cyclone.claim('w1', NULL, 4);

SELECT is((SELECT array_agg(r.label || '.' || b.node ORDER BY b.seq) FROM batch b JOIN runs r ON r.id = b.run_id),
          ARRAY['P.high', 'B.work', 'P.mid', 'A.work'],
          'a batch of 4 returns the first four steps in claim order');
SELECT is((SELECT state FROM cyclone.cyclone_steps WHERE run_id = (SELECT id FROM runs WHERE label = 'P') AND node = 'low'),
          'available', 'the last in order (priority 5) is left available');

SELECT * FROM finish();
ROLLBACK;
