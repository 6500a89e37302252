-- cyclone_workflows: name PK, definition jsonb, updated_at (SPEC section 3).
BEGIN;
SELECT plan(6);

SELECT has_table('cyclone', 'cyclone_workflows', 'cyclone.cyclone_workflows exists');
SELECT col_is_pk('cyclone', 'cyclone_workflows', 'name', 'name is the primary key');
SELECT col_type_is('cyclone', 'cyclone_workflows', 'name', 'text', 'name is text');
SELECT col_type_is('cyclone', 'cyclone_workflows', 'definition', 'jsonb', 'definition is jsonb');
SELECT col_not_null('cyclone', 'cyclone_workflows', 'definition', 'definition is NOT NULL');
SELECT col_type_is('cyclone', 'cyclone_workflows', 'updated_at', 'timestamp with time zone', 'updated_at is timestamptz');

SELECT * FROM finish();
ROLLBACK;
