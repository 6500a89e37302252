-- A rate period an older release stored beyond today's bound (366 days) counts as 366 days wherever the
-- window is read: claim, metrics, explain_step and cyclone_v_limits answer instead of failing with a raw
-- 22008 (now - period) for everyone. The period is written directly, as that release let define_limit.
BEGIN;
SELECT plan(7);

SELECT cyclone.define_limit('slow', NULL, 1, '1 hour');
UPDATE cyclone.cyclone_limits SET period = '200000 years' WHERE name = 'slow';
SELECT cyclone_test.define('rl', '[{"name": "work", "limits": [{"name": "slow"}]}]');
SELECT cyclone.submit('rl') AS first \gset
SELECT cyclone.submit('rl') AS second \gset

SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 5)), 1, 'claim answers: one claim in the window');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 5)), 0, 'the rate holds the second step back');
SELECT lives_ok($$SELECT * FROM cyclone.metrics()$$, 'metrics answers');
SELECT is((SELECT value FROM cyclone.metrics() WHERE name = 'cyclone_limit_saturated_buckets'
            AND labels ->> 'limit' = 'slow'), 1::float8, 'the bucket is saturated');
SELECT is((SELECT cyclone.explain_step((cyclone_test.step(:'second')).id) ->> 'reason'), 'rate_limit',
          'explain_step answers: rate_limit');
SELECT is((SELECT claims_in_period FROM cyclone.cyclone_v_limits WHERE name = 'slow'), 1,
          'cyclone_v_limits answers: one claim in the window');
SELECT cyclone.advance_time('367 days');
SELECT is((SELECT count(*)::int FROM cyclone.claim('w1', NULL, 5)), 1, '366 days later the window has room again');

SELECT * FROM finish();
ROLLBACK;
