-- Revert cyclone:dynamic_columns
-- The day tables of history (43_history.sql) were made with LIKE, so each has its own copy of every column
-- (attislocal), which a DROP COLUMN of the parent leaves: they are dropped there too, so that a day table
-- keeps the parent's shape (the revert of history moves its rows back with SELECT *).
BEGIN;

ALTER TABLE cyclone.cyclone_steps DROP COLUMN progress_at, DROP COLUMN progress, DROP COLUMN snoozes;
ALTER TABLE cyclone.cyclone_runs DROP COLUMN priority;
DO $$
DECLARE
    v_day record;
BEGIN
    FOR v_day IN SELECT i.inhrelid::regclass AS day, i.inhparent::regclass AS parent FROM pg_inherits i
                  WHERE i.inhparent IN ('cyclone.cyclone_steps'::regclass, 'cyclone.cyclone_runs'::regclass) LOOP
        IF v_day.parent = 'cyclone.cyclone_runs'::regclass THEN
            EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS priority', v_day.day);
        ELSE
            EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS progress_at, DROP COLUMN IF EXISTS progress, '
                           'DROP COLUMN IF EXISTS snoozes', v_day.day);
        END IF;
    END LOOP;
END
$$;

COMMIT;
