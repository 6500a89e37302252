-- Deploy cyclone:map_items
-- requires: dynamic_nodes history
-- SPEC 16's map items (issue 33): a map node fans out into one step of kind item per element of a list,
-- sharing the map's node name, told apart by item_index (0..n-1) and carrying their element (item).
-- step_node_unique becomes (run_id, item_index, node) with NULLS NOT DISTINCT: a node's own step has item_index
-- NULL and stays one per run; item_index second, so that a run's own steps (item_index IS NULL) are one range
-- of the index however many items its maps have, and the advance never reads the items to find them.
-- cyclone_steps_open_items finds a map's unfinished items with one probe (is this the last one?).
-- step_item_iff_item: item_index and item are set iff the step is an item.
-- Deploying it rebuilds the unique index of the live steps and of each day table of history (made with LIKE,
-- each has its own copy): under an exclusive lock, for a time that grows with the history kept; plan it
-- (docs/operations.md, "Upgrading to 0.21.0"). The tables' engine file is sql/engine/10_runs_tables.sql.
BEGIN;

ALTER TABLE cyclone.cyclone_steps ADD COLUMN item_index int, ADD COLUMN item jsonb;
COMMENT ON COLUMN cyclone.cyclone_steps.item_index IS 'A map item''s position in its list, from 0 (SPEC 16); NULL for every other step.';
COMMENT ON COLUMN cyclone.cyclone_steps.item IS 'A map item''s element of its list (SPEC 16); NULL for every other step.';

ALTER TABLE cyclone.cyclone_steps
    DROP CONSTRAINT step_node_unique,
    ADD CONSTRAINT step_node_unique UNIQUE NULLS NOT DISTINCT (run_id, item_index, node),
    ADD CONSTRAINT step_item_iff_item CHECK ((item_index IS NOT NULL) = (kind = 'item')) NOT VALID;
CREATE INDEX cyclone_steps_open_items
    ON cyclone.cyclone_steps (run_id, node) WHERE item_index IS NOT NULL AND finished_at IS NULL;

-- The day tables: their own unique key on (run_id, node), from LIKE ... INCLUDING INDEXES, goes, and the
-- new key is made in its place, as a constraint as LIKE makes it (a day table would refuse the items of an
-- archived run). _drop_unique drops a unique index, or the constraint it is the index of; it is this
-- script's and its revert's only.
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
DO $$
DECLARE
    v_day regclass;
    v_index regclass;
BEGIN
    FOR v_day IN SELECT i.inhrelid::regclass FROM pg_inherits i
                  WHERE i.inhparent = 'cyclone.cyclone_steps'::regclass LOOP
        -- LIKE ... INCLUDING INDEXES copied step_node_unique as a unique constraint of the day table's own.
        FOR v_index IN
            SELECT x.indexrelid::regclass FROM pg_index x
             WHERE x.indrelid = v_day AND x.indisunique AND NOT x.indisprimary AND x.indnatts = 2
               AND (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = v_day AND a.attnum = x.indkey[0]) = 'run_id'
               AND (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = v_day AND a.attnum = x.indkey[1]) = 'node'
        LOOP
            PERFORM cyclone._drop_unique(v_day, v_index);
        END LOOP;
        EXECUTE format('ALTER TABLE %s ADD UNIQUE NULLS NOT DISTINCT (run_id, item_index, node)', v_day);
    END LOOP;
END
$$;

DROP FUNCTION cyclone._drop_unique(regclass, regclass);

COMMIT;

BEGIN;
ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_item_iff_item;
COMMIT;
