-- The three views and the columns SPEC section 3 promises on them:
-- cyclone_v_runs has no error_kind; cyclone_v_steps has completed_at (and no
-- discarded_at); cyclone_v_dlq is cyclone_v_steps plus the run's workflow.
BEGIN;
SELECT plan(35);

SELECT has_view('cyclone', 'cyclone_v_runs', 'cyclone.cyclone_v_runs exists');
SELECT has_view('cyclone', 'cyclone_v_steps', 'cyclone.cyclone_v_steps exists');
SELECT has_view('cyclone', 'cyclone_v_dlq', 'cyclone.cyclone_v_dlq exists');

SELECT has_column('cyclone', 'cyclone_v_runs', c, format('cyclone_v_runs has %s', c))
  FROM unnest(ARRAY['id', 'workflow', 'state', 'input', 'output', 'created_at', 'finished_at',
                    'deadline_at']) c;
SELECT hasnt_column('cyclone', 'cyclone_v_runs', 'error_kind', 'cyclone_v_runs has no error_kind');

SELECT has_column('cyclone', 'cyclone_v_steps', c, format('cyclone_v_steps has %s', c))
  FROM unnest(ARRAY['run_id', 'node', 'kind', 'state', 'attempt', 'max_attempts', 'reclaims', 'error',
                    'error_kind', 'scheduled_at', 'started_at', 'completed_at']) c;
SELECT col_type_is('cyclone', 'cyclone_v_steps', 'completed_at', 'timestamp with time zone',
                   'cyclone_v_steps.completed_at is timestamptz');
SELECT hasnt_column('cyclone', 'cyclone_v_steps', 'discarded_at', 'cyclone_v_steps has no discarded_at');

SELECT has_column('cyclone', 'cyclone_v_dlq', c, format('cyclone_v_dlq has %s', c))
  FROM unnest(ARRAY['workflow', 'run_id', 'node', 'state', 'attempt', 'error', 'error_kind',
                    'completed_at']) c;
SELECT hasnt_column('cyclone', 'cyclone_v_dlq', 'discarded_at', 'cyclone_v_dlq has no discarded_at');

SELECT * FROM finish();
ROLLBACK;
