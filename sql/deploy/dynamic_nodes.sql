-- Deploy cyclone:dynamic_nodes
-- requires: dynamic_columns step_errors history
-- SPEC 16's node kinds, state and error kinds (issue 33): steps of kind sleep, map and item; the terminal
-- state skipped (a condition that did not hold, or a skipped dependency); the error kinds bad_input (a value a
-- node needs is missing or has the wrong shape) and item_failed (a map's item was discarded). And the column
-- spec: what a node decides when it is reached (when, unless, on_dep_skipped; a sleep's duration or until),
-- copied from its definition at submit as the rest of a node is, NULL for a node without any.
-- The CHECKs only admit more: each is replaced NOT VALID and validated in a second transaction, where
-- VALIDATE CONSTRAINT takes a lock that lets claims and reports go on while it reads the steps (and the day
-- tables of history, which inherit the CHECKs, and whose own history_step_finished admits skipped now). The
-- tables' engine file is sql/engine/10_runs_tables.sql; the day tables' is made by 43_history.sql.
BEGIN;

ALTER TABLE cyclone.cyclone_steps ADD COLUMN spec jsonb;
COMMENT ON COLUMN cyclone.cyclone_steps.spec IS
    'What the node decides when reached (SPEC 16): when, unless, on_dep_skipped, a sleep''s duration or until; NULL = nothing.';

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
                       'ADD CONSTRAINT history_step_finished CHECK (state IN (''completed'', ''discarded'', ''cancelled'', ''skipped'')) NOT VALID',
                       v_day);
    END LOOP;
END
$$;
ALTER TABLE cyclone.cyclone_steps
    ADD CONSTRAINT step_kind_valid CHECK (kind IN ('task', 'wait', 'child', 'sleep', 'map', 'item')) NOT VALID,
    ADD CONSTRAINT step_state_valid CHECK (state IN
        ('pending', 'available', 'running', 'waiting', 'completed', 'discarded', 'cancelled', 'skipped')) NOT VALID,
    ADD CONSTRAINT step_error_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout', 'permanent',
        'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'cancelled', 'bad_input', 'item_failed')) NOT VALID,
    ADD CONSTRAINT step_finished_iff_terminal CHECK (
        (finished_at IS NOT NULL) = (state IN ('completed', 'discarded', 'cancelled', 'skipped'))) NOT VALID,
    ADD CONSTRAINT step_only_tasks_run CHECK (state NOT IN ('available', 'running') OR kind IN ('task', 'item'))
        NOT VALID,
    ADD CONSTRAINT step_only_waits_wait CHECK (state <> 'waiting' OR kind IN ('wait', 'child', 'sleep', 'map'))
        NOT VALID;
ALTER TABLE cyclone.cyclone_step_errors
    DROP CONSTRAINT step_errors_kind_valid,
    ADD CONSTRAINT step_errors_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout', 'permanent',
        'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'bad_input', 'item_failed')) NOT VALID;

COMMIT;

BEGIN;

ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_kind_valid;
ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_state_valid;
ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_error_kind_valid;
ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_finished_iff_terminal;
ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_only_tasks_run;
ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_only_waits_wait;
ALTER TABLE cyclone.cyclone_step_errors VALIDATE CONSTRAINT step_errors_kind_valid;
DO $$
DECLARE
    v_day regclass;
BEGIN
    FOR v_day IN SELECT i.inhrelid::regclass FROM pg_inherits i
                  WHERE i.inhparent = 'cyclone.cyclone_steps'::regclass LOOP
        EXECUTE format('ALTER TABLE %s VALIDATE CONSTRAINT history_step_finished', v_day);
    END LOOP;
END
$$;

COMMIT;
