-- SPEC 12: a held-back step stays available and never delays a claimable step
-- behind it in claim order: neither steps with no limit, nor steps of another
-- bucket, nor steps of its own queue bucket behind a head held back by a second
-- limit.
BEGIN;
SELECT plan(6);

SELECT cyclone.define_limit('full', 1);
SELECT cyclone.define_limit('tenant', 10);
SELECT cyclone_test.limited('held', '[{"name": "full"}]');
SELECT cyclone_test.one_step('free');
SELECT cyclone.submit('held') FROM generate_series(1, 20);
SELECT is(cyclone_test.claim_count(1), 1, 'the first held step takes full''s one slot');
SELECT cyclone.submit('free') AS free \gset
SELECT results_eq($$SELECT run_id FROM cyclone.claim('w1', NULL, 5)$$, format($$VALUES (%L::uuid)$$, :'free'),
                  'the unlimited step behind 19 held-back ones is claimed');
-- Same queue bucket (tenant/a), heads held back by full, a step behind them without full.
SELECT cyclone_test.limited('two', '[{"name": "tenant", "key": "t"}, {"name": "full"}]');
SELECT cyclone.define_workflow('one_limit', '{"nodes": [{"name": "work", "limits": [{"name": "tenant", "key": "t"}]}]}');
SELECT cyclone.submit('two', '{"t": "a"}') FROM generate_series(1, 5);
SELECT cyclone.submit('one_limit', '{"t": "a"}') AS behind \gset
SELECT results_eq($$SELECT run_id FROM cyclone.claim('w1', NULL, 5)$$, format($$VALUES (%L::uuid)$$, :'behind'),
                  'the step behind 5 heads of its own queue held back by a second limit is claimed');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'available'), 24,
          'every held-back step is still available');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps WHERE state = 'available' AND attempt = 0), 24,
          'with no attempt charged');
SELECT is(cyclone_test.claim_count(10), 0, 'and nothing else is claimable');

SELECT * FROM finish();
ROLLBACK;
