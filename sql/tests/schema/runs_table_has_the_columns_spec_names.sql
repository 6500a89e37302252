-- cyclone_runs carries every column SPEC section 3 names, with those types,
-- and no error_kind (a run's error lives on the step that failed it).
BEGIN;
SELECT plan(17);

SELECT has_table('cyclone', 'cyclone_runs', 'cyclone.cyclone_runs exists');
SELECT col_is_pk('cyclone', 'cyclone_runs', 'id', 'id is the primary key');
SELECT col_type_is('cyclone', 'cyclone_runs', 'id', 'uuid', 'id is uuid');
SELECT col_type_is('cyclone', 'cyclone_runs', 'workflow', 'text', 'workflow is text');
SELECT col_type_is('cyclone', 'cyclone_runs', 'state', 'text', 'state is text');
SELECT col_type_is('cyclone', 'cyclone_runs', 'input', 'jsonb', 'input is jsonb');
SELECT col_type_is('cyclone', 'cyclone_runs', 'output', 'jsonb', 'output is jsonb');
SELECT col_type_is('cyclone', 'cyclone_runs', 'created_at', 'timestamp with time zone', 'created_at is timestamptz');
SELECT col_type_is('cyclone', 'cyclone_runs', 'started_at', 'timestamp with time zone', 'started_at is timestamptz');
SELECT col_type_is('cyclone', 'cyclone_runs', 'finished_at', 'timestamp with time zone', 'finished_at is timestamptz');
SELECT col_type_is('cyclone', 'cyclone_runs', 'deadline_at', 'timestamp with time zone', 'deadline_at is timestamptz');
SELECT col_is_null('cyclone', 'cyclone_runs', 'deadline_at', 'deadline_at is nullable (NULL = no deadline)');
SELECT col_type_is('cyclone', 'cyclone_runs', 'paused_at', 'timestamp with time zone', 'paused_at is timestamptz');
SELECT col_type_is('cyclone', 'cyclone_runs', 'parent_run_id', 'uuid', 'parent_run_id is uuid');
SELECT col_type_is('cyclone', 'cyclone_runs', 'parent_step_id', 'bigint', 'parent_step_id is bigint');
SELECT col_type_is('cyclone', 'cyclone_runs', 'idempotency_key', 'text', 'idempotency_key is text');
SELECT hasnt_column('cyclone', 'cyclone_runs', 'error_kind', 'cyclone_runs has no error_kind column');

SELECT * FROM finish();
ROLLBACK;
