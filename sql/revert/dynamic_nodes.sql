-- Revert cyclone:dynamic_nodes
-- Steps of the new kinds and states, and errors of the new kinds, cannot be kept by the older CHECKs: they go
-- with their runs (a revert is for a database that has not used them).
BEGIN;

ALTER TABLE cyclone.cyclone_steps
    DROP CONSTRAINT step_kind_valid,
    DROP CONSTRAINT step_state_valid,
    DROP CONSTRAINT step_error_kind_valid,
    DROP CONSTRAINT step_finished_iff_terminal,
    DROP CONSTRAINT step_only_tasks_run,
    DROP CONSTRAINT step_only_waits_wait;
-- The day tables of history (43_history.sql) were made with LIKE ... INCLUDING CONSTRAINTS before they
-- inherited the table, so each keeps a local copy of every CHECK, which the DROP above leaves: drop those
-- too, so that the ADD below gives every day table the new CHECKs.
DO $$
DECLARE
    v_day regclass;
BEGIN
    FOR v_day IN SELECT i.inhrelid::regclass FROM pg_inherits i
                  WHERE i.inhparent = 'cyclone.cyclone_steps'::regclass LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS step_kind_valid, '
                       'DROP CONSTRAINT IF EXISTS step_state_valid, DROP CONSTRAINT IF EXISTS step_error_kind_valid, '
                       'DROP CONSTRAINT IF EXISTS step_finished_iff_terminal, '
                       'DROP CONSTRAINT IF EXISTS step_only_tasks_run, DROP CONSTRAINT IF EXISTS step_only_waits_wait',
                       v_day);
        -- A day table holds finished steps only (history_step_finished): skipped is one of them now.
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS history_step_finished, '
                       'ADD CONSTRAINT history_step_finished CHECK (state IN (''completed'', ''discarded'', ''cancelled''))',
                       v_day);
    END LOOP;
END
$$;
ALTER TABLE cyclone.cyclone_steps
    ADD CONSTRAINT step_kind_valid CHECK (kind IN ('task', 'wait', 'child')),
    ADD CONSTRAINT step_state_valid CHECK (state IN
        ('pending', 'available', 'running', 'waiting', 'completed', 'discarded', 'cancelled')),
    ADD CONSTRAINT step_error_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout', 'permanent',
        'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'cancelled')),
    ADD CONSTRAINT step_finished_iff_terminal CHECK (
        (finished_at IS NOT NULL) = (state IN ('completed', 'discarded', 'cancelled'))),
    ADD CONSTRAINT step_only_tasks_run CHECK (state NOT IN ('available', 'running') OR kind = 'task'),
    ADD CONSTRAINT step_only_waits_wait CHECK (state <> 'waiting' OR kind IN ('wait', 'child'));
ALTER TABLE cyclone.cyclone_step_errors
    DROP CONSTRAINT step_errors_kind_valid,
    ADD CONSTRAINT step_errors_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout',
        'permanent', 'reclaim_limit', 'deadline', 'max_wait', 'child_failed'));
ALTER TABLE cyclone.cyclone_steps DROP COLUMN spec;
-- A day table made with LIKE has its own copy of the column, which the DROP above leaves (dynamic_columns'
-- revert says why it goes too).
DO $$
DECLARE
    v_day regclass;
BEGIN
    FOR v_day IN SELECT i.inhrelid::regclass FROM pg_inherits i
                  WHERE i.inhparent = 'cyclone.cyclone_steps'::regclass LOOP
        EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS spec', v_day);
    END LOOP;
END
$$;

COMMIT;
