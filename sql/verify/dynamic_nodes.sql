-- Verify cyclone:dynamic_nodes
BEGIN;
SELECT spec FROM cyclone.cyclone_steps WHERE false;
SELECT 1 / (pg_get_constraintdef((SELECT oid FROM pg_constraint WHERE conname = 'step_state_valid'
                                   AND conrelid = 'cyclone.cyclone_steps'::regclass)) ~ 'skipped')::int;
SELECT 1 / (SELECT bool_and(convalidated)::int FROM pg_constraint
             WHERE conrelid = 'cyclone.cyclone_steps'::regclass AND contype = 'c');
ROLLBACK;
