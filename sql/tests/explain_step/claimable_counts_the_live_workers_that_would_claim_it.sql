-- SPEC 18: explain_step's claimable reads the registry: workers is how many live registered workers would
-- claim the step (their info's handlers and workflows hold it, or say nothing); 0 means no worker is
-- claiming it.
BEGIN;
SELECT plan(5);

SELECT cyclone_test.one_step('ex') \gset
SELECT cyclone.submit('ex') AS r \gset
SELECT id AS s FROM cyclone.cyclone_steps WHERE run_id = :'r' \gset

SELECT is(cyclone.explain_step(:s), '{"reason": "claimable", "workers": 0}', 'no worker registered: 0');
SELECT cyclone.register_worker('other_handler', '{"handlers": ["not_work"]}');
SELECT cyclone.register_worker('other_workflow', '{"handlers": ["work"], "workflows": ["not_ex"]}');
SELECT is(cyclone.explain_step(:s) -> 'workers', '0', 'workers claiming other handlers or workflows: 0');
SELECT cyclone.register_worker('any', '{"handlers": null, "workflows": "garbage"}');
SELECT cyclone.register_worker('this', '{"handlers": ["work", "x"], "workflows": ["ex"]}');
SELECT is(cyclone.explain_step(:s) -> 'workers', '2',
          'a worker for any handler (absent, null or not an array) and one for this handler and workflow');
SELECT cyclone.advance_time('61 seconds');
SELECT cyclone.register_worker('this', '{"handlers": ["work"]}');
SELECT is(cyclone.explain_step(:s) -> 'workers', '1', 'workers unseen for 60 seconds are not counted');
SELECT cyclone.register_worker('u', jsonb_build_object('handlers', jsonb_build_array(1, NULL, jsonb_build_object('a', 1))));
SELECT is(cyclone.explain_step(:s) -> 'workers', '1', 'info of any shape never breaks explain_step');

SELECT * FROM finish();
ROLLBACK;
