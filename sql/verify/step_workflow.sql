-- Verify cyclone:step_workflow
BEGIN;
SELECT workflow FROM cyclone.cyclone_steps WHERE false;
SELECT 1 / (SELECT attnotnull::int FROM pg_attribute
             WHERE attrelid = 'cyclone.cyclone_steps'::regclass AND attname = 'workflow');
ROLLBACK;
