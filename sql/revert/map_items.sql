-- Revert cyclone:map_items
-- Items cannot be kept by the older unique key: they go with their runs (a revert is for a database that has
-- not used them).
BEGIN;

DO $$
DECLARE
    v_day regclass;
    v_index regclass;
BEGIN
    FOR v_day IN SELECT i.inhrelid::regclass FROM pg_inherits i
                  WHERE i.inhparent = 'cyclone.cyclone_steps'::regclass LOOP
        FOR v_index IN
            SELECT x.indexrelid::regclass FROM pg_index x
             WHERE x.indrelid = v_day AND x.indisunique AND NOT x.indisprimary AND x.indnatts = 3
        LOOP
            EXECUTE format('DROP INDEX %s', v_index);
        END LOOP;
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS step_item_iff_item, '
                       'DROP COLUMN IF EXISTS item, DROP COLUMN IF EXISTS item_index', v_day);
        EXECUTE format('CREATE UNIQUE INDEX ON %s (run_id, node)', v_day);
    END LOOP;
END
$$;
DROP INDEX cyclone.cyclone_steps_open_items;
ALTER TABLE cyclone.cyclone_steps
    DROP CONSTRAINT step_item_iff_item,
    DROP CONSTRAINT step_node_unique,
    ADD CONSTRAINT step_node_unique UNIQUE (run_id, node);
ALTER TABLE cyclone.cyclone_steps DROP COLUMN item, DROP COLUMN item_index;

COMMIT;
