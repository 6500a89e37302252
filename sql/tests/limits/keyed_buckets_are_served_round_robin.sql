-- SPEC 12 fairness: at equal priority, one step per bucket per turn, buckets in
-- least-recently-served order: with 100 steps of bucket A submitted before 10
-- of bucket B, B's 10 are among the first 20 claims (one at a time and in
-- batches alike).
BEGIN;
SELECT plan(4);

SELECT cyclone.define_limit('tenant', 1000);
SELECT cyclone_test.limited('fw', '[{"name": "tenant", "key": "t"}]');
SELECT cyclone.submit('fw', '{"t": "A"}') FROM generate_series(1, 100);
SELECT cyclone.submit('fw', '{"t": "B"}') FROM generate_series(1, 10);
CREATE TEMP TABLE taken (n serial, t text);
DO $$ BEGIN
    FOR i IN 1 .. 20 LOOP
        INSERT INTO taken (t) SELECT c.input ->> 't' FROM cyclone.claim('w1', NULL, 1) c;
    END LOOP;
END $$;
SELECT is((SELECT count(*)::int FROM taken WHERE t = 'B'), 10, 'claims of one: B''s 10 are among the first 20');
SELECT is((SELECT string_agg(t, '' ORDER BY n) FROM taken), 'ABABABABABABABABABAB', 'A and B alternate');
SELECT cyclone.cancel(id) FROM cyclone.cyclone_runs;

SELECT cyclone.submit('fw', '{"t": "A"}') FROM generate_series(1, 100);
SELECT cyclone.submit('fw', '{"t": "B"}') FROM generate_series(1, 10);
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 20) c WHERE c.input ->> 't' = 'B'), 10,
          'one batch of 20: B''s 10 are in it');
-- A third bucket never served comes first in the next turn.
SELECT cyclone.submit('fw', '{"t": "C"}');
SELECT is((SELECT c.input ->> 't' FROM cyclone.claim('w1', NULL, 1) c), 'C', 'a bucket never served comes first');

SELECT * FROM finish();
ROLLBACK;
