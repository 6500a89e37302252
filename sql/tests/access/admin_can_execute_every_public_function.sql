-- cyclone_admin can do everything public (operator actions and the clock included),
-- and the worker and client roles get nothing beyond their lists.
BEGIN;
SELECT plan(3);

SELECT is((SELECT array_agg(oid::regprocedure::text ORDER BY oid::regprocedure::text) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace AND proname !~ '^_'
              AND NOT has_function_privilege('cyclone_admin', oid, 'EXECUTE')),
          NULL, 'no public function is out of cyclone_admin''s reach');
-- now(), backoff() and next_fire() are read-only helpers a worker or client may need; anything
-- else a role can run must be on its SPEC list.
SELECT is((SELECT array_agg(proname::text ORDER BY proname) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace
              AND has_function_privilege('cyclone_worker', oid, 'EXECUTE')
              AND proname NOT IN ('claim', 'renew', 'renew_many', 'release', 'snooze', 'progress', 'complete', 'complete_many', 'fail', 'tick', 'define_workflow', 'version',
                                  'register_worker', 'deregister_worker', 'now', 'backoff', 'next_fire', 'schedule', 'unschedule', 'pause_schedule',
                                  'resume_schedule', 'backfill', 'define_limit', 'drop_limit')),
          NULL, 'cyclone_worker can execute nothing beyond its list');
SELECT is((SELECT array_agg(proname::text ORDER BY proname) FROM pg_proc
            WHERE pronamespace = 'cyclone'::regnamespace
              AND has_function_privilege('cyclone_client', oid, 'EXECUTE')
              AND proname NOT IN ('submit', 'submit_many', 'get_run', 'signal', 'explain_step', 'now', 'next_fire',
                                  'emit_event', 'signal_with_start', 'version',
                                  'metrics', 'list_runs', 'list_steps', 'list_dead_letters',
                                  'overview_gauges', 'finished_per_minute', 'finished_runs')),
          NULL, 'cyclone_client can execute nothing beyond its list');

SELECT * FROM finish();
ROLLBACK;
