-- SPEC 17: an await node whose "run" value is not a uuid, names no run, or names its own run is discarded as
-- bad_input when reached; max_wait applies to a waiting await node.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.define('watch3', '[{"name": "done", "kind": "await", "run": "input.job", "max_wait": "1 hour"}]');
SELECT cyclone.submit('watch3', '{"job": 12}') AS r1 \gset
SELECT is((cyclone_test.step(:'r1', 'done')).error, 'await run input.job: 12 is not a run id', 'not a uuid: bad_input');
SELECT cyclone.submit('watch3', jsonb_build_object('job', gen_random_uuid())) AS r2 \gset
SELECT is((cyclone_test.step(:'r2', 'done')).error_kind, 'bad_input', 'no such run: bad_input');
SELECT cyclone.submit('watch3', '{}') AS r3 \gset
SELECT is((cyclone_test.step(:'r3', 'done')).error_kind, 'bad_input', 'nothing at the path: bad_input');

SELECT cyclone_test.define('slow', '[{"name": "go", "handler": "slow"}]');
SELECT cyclone.submit('slow') AS job \gset
SELECT cyclone.submit('watch3', jsonb_build_object('job', :'job')) AS r4 \gset
SELECT cyclone.advance_time('61 minutes');
SELECT cyclone.tick();
SELECT is((cyclone_test.step(:'r4', 'done')).error_kind, 'max_wait', 'max_wait applies');
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'the invariants hold');

SELECT * FROM finish();
ROLLBACK;
