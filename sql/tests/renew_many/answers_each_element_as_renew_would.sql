-- renew_many: each element is renew's compare-and-set with renew's answer, in input order (issue 32).
-- (A row held by another transaction is skipped with NULL: tests/test_heartbeats.py, which holds it from a
-- second connection.)
BEGIN;
SELECT plan(11);

SELECT cyclone_test.one_step('one', 3, '10 seconds') AS wf \gset
SELECT cyclone.submit('one') AS a \gset
SELECT step_id AS sa, lease_generation AS ga FROM cyclone_test.claim_node(:'a', 'work', 'w1', '60 seconds') \gset
SELECT cyclone.submit('one') AS b \gset
SELECT step_id AS sb, lease_generation AS gb FROM cyclone_test.claim_node(:'b', 'work', 'w1', '60 seconds') \gset
SELECT cyclone.submit('one') AS c \gset
SELECT step_id AS sc, lease_generation AS gc FROM cyclone_test.claim_node(:'c', 'work', 'w2', '60 seconds') \gset
SELECT cyclone.advance_time('5 seconds') AS t1 \gset

SELECT results_eq(
    format($$SELECT step_id, renewed FROM cyclone.renew_many('w1', ARRAY[%s, %s, %s, -1], ARRAY[%s, %s, %s, 1],
                                                              '60 seconds')$$,
           :sb, :sa, :sc, :gb, :ga + 1, :gc),
    format('VALUES (%s::bigint, true), (%s, false), (%s, false), (-1, false)', :sb, :sa, :sc),
    'the current owner and generation renew; a stale generation, another worker''s step and an unknown id do not');
SELECT is((cyclone_test.step(:'b')).lease_expiry, :'t1'::timestamptz + interval '60 seconds', 'the renewed lease runs to now + ttl');
SELECT is((cyclone_test.step(:'b')).heartbeat_at, :'t1'::timestamptz, 'and heartbeat_at is now');
SELECT isnt((cyclone_test.step(:'a')).heartbeat_at, :'t1'::timestamptz, 'a refused element changes nothing');

SELECT cyclone.advance_time('5 seconds');
SELECT ok(NOT renewed, 'past its timeout, as renew') FROM cyclone.renew_many('w1', ARRAY[:sb]::bigint[], ARRAY[:gb]::bigint[]);
SELECT is(count(*), 0::bigint, 'an empty batch answers nothing') FROM cyclone.renew_many('w1', '{}', '{}');

SELECT throws_ok(format($$SELECT * FROM cyclone.renew_many('w1', ARRAY[%s], '{}')$$, :sa), '22023', NULL,
                 'arrays of different lengths: 22023');
SELECT throws_ok(format($$SELECT * FROM cyclone.renew_many('w1', ARRAY[%s, %s], ARRAY[%s, %s])$$, :sa, :sa, :ga, :ga),
                 '22023', NULL, 'a step listed twice: 22023');
SELECT throws_ok(format($$SELECT * FROM cyclone.renew_many('w1', ARRAY[%s], ARRAY[%s], '2 days')$$, :sa, :ga),
                 '22023', NULL, 'a TTL over 1 day: 22023');
SELECT throws_ok($$SELECT * FROM cyclone.renew_many('w1', array_fill(1::bigint, ARRAY[10001]), array_fill(1::bigint, ARRAY[10001]))$$,
                 '22023', NULL, 'more than 10,000 steps: 22023');
SELECT throws_ok($$SELECT * FROM cyclone.renew_many(NULL, '{}', '{}')$$, '22004', NULL, 'no worker: 22004');

SELECT * FROM finish();
ROLLBACK;
