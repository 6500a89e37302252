-- Revert cyclone:coordination_tables
-- Steps of the kinds event and await, errors of the kind awaited_run_failed and audit rows of reruns cannot be
-- kept by the older CHECKs: they go with their runs (a revert is for a database that has not used them).
BEGIN;

ALTER TABLE cyclone.cyclone_steps
    DROP CONSTRAINT step_kind_valid,
    DROP CONSTRAINT step_error_kind_valid,
    DROP CONSTRAINT step_only_waits_wait;
DO $$
DECLARE
    v_day regclass;
BEGIN
    FOR v_day IN SELECT i.inhrelid::regclass FROM pg_inherits i
                  WHERE i.inhparent = 'cyclone.cyclone_steps'::regclass LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT IF EXISTS step_kind_valid, '
                       'DROP CONSTRAINT IF EXISTS step_error_kind_valid, '
                       'DROP CONSTRAINT IF EXISTS step_only_waits_wait', v_day);
    END LOOP;
END
$$;
ALTER TABLE cyclone.cyclone_steps
    ADD CONSTRAINT step_kind_valid CHECK (kind IN ('task', 'wait', 'child', 'sleep', 'map', 'item')),
    ADD CONSTRAINT step_error_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout', 'permanent',
        'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'cancelled', 'bad_input', 'item_failed')),
    ADD CONSTRAINT step_only_waits_wait CHECK (state <> 'waiting' OR kind IN ('wait', 'child', 'sleep', 'map'));
ALTER TABLE cyclone.cyclone_step_errors
    DROP CONSTRAINT step_errors_kind_valid,
    ADD CONSTRAINT step_errors_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout', 'permanent',
        'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'bad_input', 'item_failed'));
ALTER TABLE cyclone.cyclone_audit
    DROP CONSTRAINT audit_action_valid,
    ADD CONSTRAINT audit_action_valid CHECK (action IN ('retry', 'cancel', 'pause', 'resume')),
    DROP COLUMN detail;

ALTER TABLE cyclone.cyclone_steps DROP COLUMN event_key, DROP COLUMN awaited_run_id;
ALTER TABLE cyclone.cyclone_runs DROP COLUMN rerun_of, DROP COLUMN debounce_key;
-- A day table made with LIKE has its own copy of each column, which the DROPs above leave (dynamic_columns'
-- revert says why they go too).
DO $$
DECLARE
    v_day regclass;
BEGIN
    FOR v_day IN SELECT i.inhrelid::regclass FROM pg_inherits i
                  WHERE i.inhparent = 'cyclone.cyclone_steps'::regclass LOOP
        EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS event_key, DROP COLUMN IF EXISTS awaited_run_id', v_day);
    END LOOP;
    FOR v_day IN SELECT i.inhrelid::regclass FROM pg_inherits i
                  WHERE i.inhparent = 'cyclone.cyclone_runs'::regclass LOOP
        EXECUTE format('ALTER TABLE %s DROP COLUMN IF EXISTS rerun_of, DROP COLUMN IF EXISTS debounce_key', v_day);
    END LOOP;
END
$$;
DROP TABLE cyclone.cyclone_events;

COMMIT;
