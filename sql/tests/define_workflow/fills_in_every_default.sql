-- Defaults of SPEC section 4: kind task, handler = node name, deps [], on_dep_failure
-- fail_run, max_attempts = the workflow's (itself 25 by default), priority 0.
-- Checked on the steps a submit creates, which is where the defaults take effect.
BEGIN;
SELECT plan(5);

SELECT lives_ok($$SELECT cyclone.define_workflow('bare', '{"nodes": [{"name": "fetch"}, {"name": "store", "deps": ["fetch"]}]}')$$,
                'a definition with names only is accepted');
SELECT lives_ok($$SELECT cyclone.define_workflow('tuned', '{"max_attempts": 7, "nodes": [
                    {"name": "a"},
                    {"name": "b", "handler": "b_impl", "max_attempts": 2, "priority": -5,
                     "deps": ["a"], "on_dep_failure": "cancel_branch", "timeout": "30 seconds"}]}')$$,
                'a definition with explicit values is accepted');
CREATE TEMP TABLE t AS SELECT cyclone.submit('bare') AS bare, cyclone.submit('tuned') AS tuned;

SELECT results_eq(
    $$SELECT node, kind, handler, deps, on_dep_failure, max_attempts, priority, timeout
        FROM cyclone.cyclone_steps WHERE run_id = (SELECT bare FROM t) ORDER BY node$$,
    $$VALUES ('fetch'::text, 'task'::text, 'fetch'::text, '{}'::text[], 'fail_run'::text, 25, 0, NULL::interval),
             ('store', 'task', 'store', '{fetch}', 'fail_run', 25, 0, NULL)$$,
    'every default filled in; max_attempts defaults to 25');
SELECT results_eq(
    $$SELECT node, kind, handler, deps, on_dep_failure, max_attempts, priority, timeout
        FROM cyclone.cyclone_steps WHERE run_id = (SELECT tuned FROM t) ORDER BY node$$,
    $$VALUES ('a'::text, 'task'::text, 'a'::text, '{}'::text[], 'fail_run'::text, 7, 0, NULL::interval),
             ('b', 'task', 'b_impl', '{a}', 'cancel_branch', 2, -5, interval '30 seconds')$$,
    'a node inherits the workflow''s max_attempts; explicit values are kept');
SELECT is((SELECT count(*)::int FROM cyclone.cyclone_workflows WHERE name IN ('bare', 'tuned')), 2,
          'both workflows are registered');

SELECT * FROM finish();
ROLLBACK;
