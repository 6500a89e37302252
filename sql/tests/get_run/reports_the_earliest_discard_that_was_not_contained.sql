-- get_run's error_kind/error come from the earliest discard (finished_at, then
-- id) among the run's discards that cancel_branch did not contain.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.define('many', '[{"name":"early"},
                                     {"name":"guard","deps":["early"],"on_dep_failure":"cancel_branch"},
                                     {"name":"first"},{"name":"second"}]') AS wf \gset
SELECT cyclone.submit('many', '{}', '1 hour') AS run \gset
SELECT cyclone.now() AS t0 \gset

-- t0: a contained discard, the earliest of all.
SELECT is(cyclone_test.fail_node(:'run', 'early', 'permanent'), 'discarded', 'early is discarded (contained)');
SELECT results_eq(format('SELECT state, error_kind, error FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('running'::text, NULL::text, NULL::text)$$, 'a contained discard is no error of the run');

-- t1: the deadline discards first and second at the same instant.
SELECT cyclone.advance_time('2 hours') AS t1 \gset
SELECT results_eq('SELECT * FROM cyclone.enforce_deadlines()', format('VALUES (%L::uuid)', :'run'),
                  'the deadline fails the run');
SELECT results_eq(format('SELECT state, error_kind, error FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('failed'::text, 'deadline'::text, 'run deadline exceeded'::text)$$,
                  'the earliest discard that was not contained is reported, not the contained one');
SELECT ok((cyclone_test.step(:'run', 'first')).id < (cyclone_test.step(:'run', 'second')).id,
          'first has the smaller id (tie-break)');

-- t2: retry first; it then fails with another kind. second (t1) is now the
-- earliest uncontained discard, although first has the smaller id.
SELECT cyclone.advance_time('1 minute') AS t2 \gset
SELECT lives_ok(format('SELECT cyclone.retry(%L, %L)', :'run', 'first'), 'first is retried');
SELECT is(cyclone_test.fail_node(:'run', 'first', 'permanent'), 'discarded', 'first is discarded again, later');
SELECT results_eq(format($$SELECT node, error_kind, finished_at FROM cyclone.cyclone_steps
                           WHERE run_id = %L AND state = 'discarded' ORDER BY node$$, :'run'),
                  format($$VALUES ('early'::text, 'permanent'::text, %L::timestamptz), ('first', 'permanent', %L),
                                  ('second', 'deadline', %L)$$, :'t0', :'t2', :'t1'),
                  'three discards: early (contained), first (t2), second (t1)');
SELECT results_eq(format('SELECT state, error_kind, error FROM cyclone.get_run(%L)', :'run'),
                  $$VALUES ('failed'::text, 'deadline'::text, 'run deadline exceeded'::text)$$,
                  'get_run orders by finished_at before id: second''s deadline is reported');

SELECT * FROM finish();
ROLLBACK;
