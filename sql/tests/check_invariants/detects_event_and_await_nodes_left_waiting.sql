-- SPEC 17: check_invariants reports an await node waiting on a run that has ended
-- (await_waiting_on_ended_run) and an event node waiting on a key whose event was emitted after its run began
-- (event_waiting_on_emitted_key). Planted by writes no engine function makes.
BEGIN;
SELECT plan(3);

SELECT cyclone_test.define('inv_job', '[{"name": "go", "handler": "inv_go"}]');
SELECT cyclone_test.define('inv_watch', '[{"name": "done", "kind": "await", "run": "input.job"},
                                          {"name": "paid", "kind": "event", "key": "inv:{input.n}"}]');
SELECT cyclone.submit('inv_job') AS job \gset
SELECT cyclone.submit('inv_watch', jsonb_build_object('job', :'job', 'n', 1)) AS run \gset
SELECT is((SELECT count(*)::int FROM cyclone.check_invariants()), 0, 'none while both wait as they should');

UPDATE cyclone.cyclone_runs SET state = 'cancelled', finished_at = cyclone.now() WHERE id = :'job';
INSERT INTO cyclone.cyclone_events (key, payload) VALUES ('inv:1', '{}');
SELECT is((SELECT detail ->> 'awaited_run_id' FROM cyclone.check_invariants()
            WHERE invariant = 'await_waiting_on_ended_run'), :'job',
          'an await node waiting on an ended run is reported');
SELECT is((SELECT detail ->> 'key' FROM cyclone.check_invariants() WHERE invariant = 'event_waiting_on_emitted_key'),
          'inv:1', 'an event node waiting on a key already emitted is reported');

SELECT * FROM finish();
ROLLBACK;
