-- Order: priority (smaller first), then oldest scheduled_at, then id.
--   A.work: priority 0, scheduled 10 s after B (lower id than B)
--   B.work: priority 0, scheduled now
--   P.high: priority -1; P.mid: priority 0 (id above B.work); P.low: priority 5
-- Expected picks, one at a time: P.high, B.work, P.mid, A.work, P.low.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.one_step('one') AS wf \gset
SELECT cyclone_test.define('prio', '[{"name":"low","handler":"work","priority":5},
                                     {"name":"high","handler":"work","priority":-1},
                                     {"name":"mid","handler":"work"}]') AS wf2 \gset
CREATE TEMP TABLE runs (label text, id uuid);
INSERT INTO runs SELECT 'A', cyclone.submit('one', '{}', NULL, NULL, cyclone.now() + interval '10 seconds');
INSERT INTO runs SELECT 'B', cyclone.submit('one');
INSERT INTO runs SELECT 'P', cyclone.submit('prio');
SELECT cyclone.advance_time('20 seconds') AS t \gset

SELECT ok((SELECT a.id < b.id FROM cyclone.cyclone_steps a, cyclone.cyclone_steps b
            WHERE a.run_id = (SELECT id FROM runs WHERE label = 'A')
              AND b.run_id = (SELECT id FROM runs WHERE label = 'B')),
          'sanity: A.work has a lower id than B.work, so scheduled_at alone must put B first');

CREATE TEMP TABLE picks (seq serial, run_id uuid, node text);
INSERT INTO picks (run_id, node) SELECT run_id, node FROM cyclone.claim('w1', NULL, 1);
INSERT INTO picks (run_id, node) SELECT run_id, node FROM cyclone.claim('w1', NULL, 1);
INSERT INTO picks (run_id, node) SELECT run_id, node FROM cyclone.claim('w1', NULL, 1);
INSERT INTO picks (run_id, node) SELECT run_id, node FROM cyclone.claim('w1', NULL, 1);
INSERT INTO picks (run_id, node) SELECT run_id, node FROM cyclone.claim('w1', NULL, 1);

SELECT is((SELECT array_agg(r.label || '.' || p.node ORDER BY p.seq) FROM picks p JOIN runs r ON r.id = p.run_id),
          ARRAY['P.high', 'B.work', 'P.mid', 'A.work', 'P.low'],
          'one at a time, claims follow priority, then scheduled_at, then id');
SELECT is_empty($$SELECT * FROM cyclone.claim('w1', NULL, 10)$$, 'all five were claimed once');

SELECT * FROM finish();
ROLLBACK;
