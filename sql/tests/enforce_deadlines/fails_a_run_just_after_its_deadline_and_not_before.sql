-- A 30-minute deadline: one second before it the run is untouched, one second
-- after it enforce_deadlines() fails the run and returns its id.
BEGIN;
SELECT plan(9);

SELECT cyclone_test.one_step('dl') \gset
SELECT cyclone.submit('dl', '{}', '30 minutes') AS run \gset

SELECT is((SELECT deadline_at FROM cyclone.cyclone_runs WHERE id = :'run'),
          cyclone.now() + interval '30 minutes', 'deadline_at is submit time plus the deadline');

SELECT cyclone.advance_time('30 minutes' - interval '1 second') \gset
SELECT is_empty($$SELECT cyclone.enforce_deadlines()$$, 'one second before the deadline nothing fires');
SELECT is(cyclone_test.run_state(:'run'), 'running', 'the run is still running just before its deadline');
SELECT is(cyclone_test.state(:'run'), 'available', 'its step is still available just before the deadline');

SELECT cyclone.advance_time('2 seconds') \gset
SELECT results_eq($$SELECT cyclone.enforce_deadlines()$$, ARRAY[:'run'::uuid],
                  'one second after the deadline enforce_deadlines returns the run');
SELECT is(cyclone_test.run_state(:'run'), 'failed', 'the run is failed');
SELECT is((SELECT finished_at FROM cyclone.cyclone_runs WHERE id = :'run'), cyclone.now(),
          'the run finished at the moment the deadline was enforced');
SELECT is((SELECT state FROM cyclone.get_run(:'run')), 'failed', 'get_run says failed');
SELECT is_empty($$SELECT cyclone.enforce_deadlines()$$, 'a second call finds nothing more to do');

SELECT * FROM finish();
ROLLBACK;
