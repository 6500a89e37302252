-- SPEC 12: a step held back never delays a claimable step behind it, however
-- many candidates the batch held back. Two `both` steps (lim and per:a) are
-- read first from queue per:a; the first takes lim's one slot, which holds the
-- second back, and `other` (per:a only) behind them still fits: one claim of
-- two takes two. Found by the state machine test (tests/test_state_machine.py):
-- a claim read a queue only up to its limit, and came back short.
BEGIN;
SELECT plan(3);

SELECT cyclone.define_limit('lim', 1);
SELECT cyclone.define_limit('per', 2);
SELECT cyclone.define_workflow('both', '{"nodes": [{"name": "a"}], "limits": [{"name": "lim"}, {"name": "per", "key": "t"}]}');
SELECT cyclone.define_workflow('other', '{"nodes": [{"name": "a"}], "limits": [{"name": "per", "key": "t"}]}');
SELECT cyclone.submit(w, '{"t": "a"}') FROM unnest(ARRAY['both', 'both', 'other']) AS w;

SELECT is((SELECT array_agg(c.workflow ORDER BY c.workflow) FROM cyclone.claim('w1', NULL, 2) c),
          ARRAY['both', 'other'], 'one claim of two takes a both and other');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps s JOIN cyclone.cyclone_runs r ON r.id = s.run_id
            WHERE r.workflow = 'both' AND s.state = 'available' AND s.attempt = 0), 1,
          'the second both stays available, held back by lim, with no attempt charged');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w2', NULL, 5)), 0, 'and nothing else is claimable');

SELECT * FROM finish();
ROLLBACK;
