-- SPEC 12: a reclaimed step's next claim counts again in the rate window.
BEGIN;
SELECT plan(3);

SELECT cyclone.define_limit('r', NULL, 2, '1 hour');
SELECT cyclone_test.limited('rw', '[{"name": "r"}]');
SELECT cyclone.submit('rw') AS run \gset
SELECT cyclone_test.claim_node(:'run', 'work', 'w1', '10 seconds') \gset
SELECT cyclone.submit('rw') AS other \gset
SELECT cyclone.advance_time('11 seconds');
SELECT is((SELECT action FROM cyclone.sweep()), 'reclaimed', 'the lease expired: reclaimed');
SELECT is(cyclone_test.claim_count(1), 1, 'claimed again: the second claim of the window');
SELECT is(cyclone_test.claim_count(10), 0, 'the other run''s step waits: the rate of 2 is spent');

SELECT * FROM finish();
ROLLBACK;
