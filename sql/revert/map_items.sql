-- Revert cyclone:map_items
-- Items cannot be kept by the older unique key: they go with their runs (a revert is for a database that has
-- not used them). The day tables of history, made with LIKE, have their own copies of the key, the CHECK and
-- the columns: the parent's are dropped first (a child's inherited copy cannot be), then the day tables'.
BEGIN;

-- Drops a unique index, or the constraint it is the index of (map_items' deploy says why).
CREATE FUNCTION cyclone._drop_unique(p_table regclass, p_index regclass) RETURNS void LANGUAGE plpgsql AS $f$
DECLARE
    v_constraint name := (SELECT c.conname FROM pg_constraint c WHERE c.conrelid = p_table AND c.conindid = p_index);
BEGIN
    IF v_constraint IS NULL THEN
        EXECUTE format('DROP INDEX %s', p_index);
    ELSE
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', p_table, v_constraint);
    END IF;
END
$f$;

DROP INDEX cyclone.cyclone_steps_open_items;
ALTER TABLE cyclone.cyclone_steps
    DROP CONSTRAINT step_item_iff_item,
    DROP CONSTRAINT step_node_unique,
    ADD CONSTRAINT step_node_unique UNIQUE (run_id, node);
ALTER TABLE cyclone.cyclone_steps DROP COLUMN item, DROP COLUMN item_index;

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
            PERFORM cyclone._drop_unique(v_day, v_index);
        END LOOP;
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS step_item_iff_item, '
                       'DROP COLUMN IF EXISTS item, DROP COLUMN IF EXISTS item_index', v_day);
        EXECUTE format('ALTER TABLE %s ADD UNIQUE (run_id, node)', v_day);
    END LOOP;
END
$$;
DROP FUNCTION cyclone._drop_unique(regclass, regclass);

COMMIT;
