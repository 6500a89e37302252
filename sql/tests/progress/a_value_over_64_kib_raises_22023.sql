-- SPEC 16: a progress value over 64 KiB is 22023 (nothing kept); a missing step, worker or generation 22004.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.one_step('one');
SELECT cyclone.submit('one') AS run \gset
SELECT step_id AS s, lease_generation AS g FROM cyclone_test.claim_node(:'run', 'work', 'w1') \gset

SELECT throws_like(format($$SELECT cyclone.progress(%s, 'w1', %s, to_jsonb(repeat('x', 70000)))$$, :s, :g),
                   '%the limit is 65536 bytes%', 'over 64 KiB: refused');
SELECT throws_ok(format($$SELECT cyclone.progress(%s, 'w1', %s, to_jsonb(repeat('x', 70000)))$$, :s, :g),
                 '22023', NULL, 'with 22023');
SELECT throws_ok(format($$SELECT cyclone.progress(NULL, 'w1', %s, '1')$$, :g), '22004', NULL,
                 'a missing step: 22004');
SELECT is(cyclone.progress(:s, 'w1', :g, to_jsonb(repeat('x', 60000))), true, '60,000 characters fit');

SELECT * FROM finish();
ROLLBACK;
