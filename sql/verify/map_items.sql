-- Verify cyclone:map_items
BEGIN;
SELECT item_index, item FROM cyclone.cyclone_steps WHERE false;
SELECT 1 / (pg_get_constraintdef((SELECT oid FROM pg_constraint WHERE conname = 'step_node_unique'
                                   AND conrelid = 'cyclone.cyclone_steps'::regclass))
            = 'UNIQUE NULLS NOT DISTINCT (run_id, item_index, node)')::int;
SELECT 'cyclone.cyclone_steps_open_items'::regclass;
ROLLBACK;
