-- Cancel, pause, resume and signal on an archived run answer false, as on any
-- finished run (not "not found"); explain_step reads its steps; an unknown run
-- is still P0002.
BEGIN;
SELECT plan(7);

SELECT cyclone_test.define('waits', '[{"name": "a"}, {"name": "w", "kind": "wait", "signal": "go", "deps": ["a"], "on_dep_failure": "cancel_branch"}]', 1) \gset
SELECT cyclone.submit('waits') AS run \gset
SELECT cyclone_test.fail_node(:'run', 'a', 'permanent') \gset
SELECT is(cyclone.archive(), 1, 'the finished run is archived');

SELECT is(cyclone.cancel(:'run'), false, 'cancel: false');
SELECT is(cyclone.pause(:'run'), false, 'pause: false');
SELECT is(cyclone.resume(:'run'), false, 'resume: false');
SELECT is(cyclone.signal(:'run', 'go'), false, 'signal: false');
SELECT is(cyclone.explain_step((cyclone_test.step(:'run', 'a')).id) ->> 'reason', 'discarded',
          'explain_step reads an archived step');
SELECT throws_ok(format($$SELECT cyclone.cancel(%L)$$, gen_random_uuid()), 'P0002', NULL,
                 'an unknown run is still not found');

SELECT * FROM finish();
ROLLBACK;
