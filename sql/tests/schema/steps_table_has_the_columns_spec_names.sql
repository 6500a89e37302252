-- cyclone_steps carries every column SPEC section 3 names, with those types.
BEGIN;
SELECT plan(31);

SELECT has_table('cyclone', 'cyclone_steps', 'cyclone.cyclone_steps exists');
SELECT col_is_pk('cyclone', 'cyclone_steps', 'id', 'id is the primary key');
SELECT col_type_is('cyclone', 'cyclone_steps', 'id', 'bigint', 'id is bigint');
SELECT col_type_is('cyclone', 'cyclone_steps', 'run_id', 'uuid', 'run_id is uuid');
-- No foreign key since hot_path_keys (issue #32): the engine keeps a step with its run, and
-- check_invariants() reports one without it (check_invariants/reports_a_step_or_a_run_without_what_it_belongs_to.sql).
SELECT col_not_null('cyclone', 'cyclone_steps', 'run_id', 'run_id is NOT NULL');
SELECT col_type_is('cyclone', 'cyclone_steps', 'node', 'text', 'node is text');
SELECT col_type_is('cyclone', 'cyclone_steps', 'handler', 'text', 'handler is text');
SELECT col_type_is('cyclone', 'cyclone_steps', 'kind', 'text', 'kind is text');
SELECT col_type_is('cyclone', 'cyclone_steps', 'state', 'text', 'state is text');
SELECT col_type_is('cyclone', 'cyclone_steps', 'attempt', 'integer', 'attempt is int');
SELECT col_type_is('cyclone', 'cyclone_steps', 'max_attempts', 'integer', 'max_attempts is int');
SELECT col_type_is('cyclone', 'cyclone_steps', 'reclaims', 'integer', 'reclaims is int');
SELECT col_type_is('cyclone', 'cyclone_steps', 'scheduled_at', 'timestamp with time zone', 'scheduled_at is timestamptz');
SELECT col_type_is('cyclone', 'cyclone_steps', 'started_at', 'timestamp with time zone', 'started_at is timestamptz');
SELECT col_type_is('cyclone', 'cyclone_steps', 'timeout', 'interval', 'timeout is interval');
SELECT col_is_null('cyclone', 'cyclone_steps', 'timeout', 'timeout is nullable (NULL = none)');
SELECT col_type_is('cyclone', 'cyclone_steps', 'lease_owner', 'text', 'lease_owner is text');
SELECT col_type_is('cyclone', 'cyclone_steps', 'lease_expiry', 'timestamp with time zone', 'lease_expiry is timestamptz');
SELECT col_type_is('cyclone', 'cyclone_steps', 'lease_generation', 'bigint', 'lease_generation is bigint');
SELECT col_type_is('cyclone', 'cyclone_steps', 'heartbeat_at', 'timestamp with time zone', 'heartbeat_at is timestamptz');
SELECT col_type_is('cyclone', 'cyclone_steps', 'input', 'jsonb', 'input is jsonb');
SELECT col_type_is('cyclone', 'cyclone_steps', 'output', 'jsonb', 'output is jsonb');
SELECT col_type_is('cyclone', 'cyclone_steps', 'error', 'text', 'error is text');
SELECT col_type_is('cyclone', 'cyclone_steps', 'error_kind', 'text', 'error_kind is text');
SELECT col_type_is('cyclone', 'cyclone_steps', 'finished_at', 'timestamp with time zone', 'finished_at is timestamptz');
SELECT col_type_is('cyclone', 'cyclone_steps', 'child_run_id', 'uuid', 'child_run_id is uuid');
SELECT hasnt_column('cyclone', 'cyclone_steps', 'discarded_at', 'there is no discarded_at (completed_at covers every terminal state)');
SELECT col_is_unique('cyclone', 'cyclone_steps', ARRAY['run_id', 'item_index', 'node'],
                     'a run has one step per node, and a map one item per position (run_id, item_index, node)');
SELECT is((SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'step_node_unique'
            AND conrelid = 'cyclone.cyclone_steps'::regclass),
          'UNIQUE NULLS NOT DISTINCT (run_id, item_index, node)', 'a node''s own step (item_index NULL) is one per run');
SELECT has_column('cyclone', 'cyclone_steps', 'item_index', 'item_index (SPEC 16)');
SELECT has_column('cyclone', 'cyclone_steps', 'item', 'item (SPEC 16)');

SELECT * FROM finish();
ROLLBACK;
