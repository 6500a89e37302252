-- Root task nodes start available and due now; every other task node starts
-- pending. Every step has attempt 0, no lease, and the run input as its input.
BEGIN;
SELECT plan(4);

SELECT cyclone_test.define('fan', '[{"name": "r1"}, {"name": "r2", "handler": "h2"},
                                    {"name": "m", "deps": ["r1"]}, {"name": "z", "deps": ["m", "r2"]}]');
SELECT cyclone.advance_time('1 day');
CREATE TEMP TABLE t AS SELECT cyclone.submit('fan', '{"k": [1, 2, 3]}') AS run_id;

SELECT results_eq(
    $$SELECT node, handler, state, attempt, reclaims, lease_owner, lease_expiry, started_at, finished_at, error, error_kind
        FROM cyclone.cyclone_steps WHERE run_id = (SELECT run_id FROM t) ORDER BY node$$,
    $$VALUES ('m'::text, 'm'::text, 'pending'::text, 0, 0, NULL::text, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, NULL::text, NULL::text),
             ('r1', 'r1', 'available', 0, 0, NULL, NULL, NULL, NULL, NULL, NULL),
             ('r2', 'h2', 'available', 0, 0, NULL, NULL, NULL, NULL, NULL, NULL),
             ('z', 'z', 'pending', 0, 0, NULL, NULL, NULL, NULL, NULL, NULL)$$,
    'roots available, the rest pending, all at attempt 0 with no lease');
SELECT results_eq(
    $$SELECT node, scheduled_at FROM cyclone.cyclone_steps
       WHERE run_id = (SELECT run_id FROM t) AND state = 'available' ORDER BY node$$,
    $$VALUES ('r1'::text, cyclone.now()), ('r2', cyclone.now())$$,
    'root tasks are scheduled at cyclone.now()');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_steps
            WHERE run_id = (SELECT run_id FROM t) AND input IS DISTINCT FROM '{"k": [1, 2, 3]}'::jsonb),
          0, 'every step''s input is the run input');
SELECT is((SELECT array_agg(node ORDER BY node) FROM cyclone.claim('w1', NULL, 10)),
          ARRAY['r1', 'r2'], 'the root tasks are claimable at once, the pending ones are not');

SELECT * FROM finish();
ROLLBACK;
