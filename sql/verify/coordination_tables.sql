-- Verify cyclone:coordination_tables
BEGIN;
SELECT id, key, payload, emitted_at FROM cyclone.cyclone_events WHERE false;
SELECT rerun_of, debounce_key FROM cyclone.cyclone_runs WHERE false;
SELECT event_key, awaited_run_id FROM cyclone.cyclone_steps WHERE false;
SELECT 1 / (pg_get_constraintdef((SELECT oid FROM pg_constraint WHERE conname = 'step_kind_valid'
                                   AND conrelid = 'cyclone.cyclone_steps'::regclass)) ~ 'await')::int;
SELECT 1 / (SELECT bool_and(convalidated)::int FROM pg_constraint
             WHERE conrelid = 'cyclone.cyclone_steps'::regclass AND contype = 'c');
ROLLBACK;
