-- Deploy cyclone:coordination_tables
-- requires: map_items audit clock
-- SPEC 17's tables and columns (issue 34): cyclone_events (emitted events, kept until prune); on a run,
-- rerun_of (the run rerun() made it from) and debounce_key (submit's p_debounce_key) with the index a
-- debounced submit finds its run by; on a step, event_key and awaited_run_id (what an event or await node
-- waits on) with the indexes emit_event and a run's end find the waiting nodes by; on an audit row, detail
-- (a signal's payload size, a rerun's original run). The node kinds event and await, the error kind
-- awaited_run_failed and the audit actions rerun and signal join their CHECKs, replaced NOT VALID
-- and validated in a second transaction (as dynamic_nodes did: claims and reports go on meanwhile); the day
-- tables of history keep local copies of the steps' CHECKs, replaced the same way. The engine files are
-- sql/engine/10_runs_tables.sql and 14_events_tables.sql.
-- Under load (issue 37): the first transaction's ALTERs take the runs' and steps' tables' strongest lock only
-- for a catalog change (new nullable columns, CHECKs added NOT VALID), and wait for it at most 5 seconds
-- (lock_timeout: a deploy that cannot have it fails with 55P03, nothing changed, and `cyclone migrate` can be
-- run again) rather than queue every claim behind a long transaction; the three indexes are built last, each
-- CONCURRENTLY, outside a transaction, so that claims and reports go on while they scan the tables.
BEGIN;
SET LOCAL lock_timeout = '5s';

CREATE TABLE cyclone.cyclone_events (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key        text NOT NULL,
    payload    jsonb,
    emitted_at timestamptz NOT NULL DEFAULT cyclone.now()
);
CREATE INDEX cyclone_events_key ON cyclone.cyclone_events (key, emitted_at, id);
CREATE INDEX cyclone_events_emitted ON cyclone.cyclone_events (emitted_at);
COMMENT ON TABLE cyclone.cyclone_events IS
    'Emitted events (SPEC 17), kept until prune: an event node of the key completes with the earliest one emitted since its run began.';
GRANT SELECT ON cyclone.cyclone_events TO cyclone_admin;

ALTER TABLE cyclone.cyclone_runs ADD COLUMN rerun_of uuid, ADD COLUMN debounce_key text;
COMMENT ON COLUMN cyclone.cyclone_runs.rerun_of IS 'The run rerun() made this one from (SPEC 17); NULL = none.';
COMMENT ON COLUMN cyclone.cyclone_runs.debounce_key IS
    'submit''s p_debounce_key (SPEC 17): later submits of the key fold into this run until a step is claimed.';

ALTER TABLE cyclone.cyclone_steps ADD COLUMN event_key text, ADD COLUMN awaited_run_id uuid;
COMMENT ON COLUMN cyclone.cyclone_steps.event_key IS 'The key an event node waits on, made from its template when reached (SPEC 17).';
COMMENT ON COLUMN cyclone.cyclone_steps.awaited_run_id IS 'The run an await node waits on, read from its path when reached (SPEC 17).';

ALTER TABLE cyclone.cyclone_steps
    DROP CONSTRAINT step_kind_valid,
    DROP CONSTRAINT step_error_kind_valid,
    DROP CONSTRAINT step_only_waits_wait;
-- The day tables' local copies (dynamic_nodes says why they exist).
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
    ADD CONSTRAINT step_kind_valid CHECK (kind IN ('task', 'wait', 'child', 'sleep', 'map', 'item', 'event', 'await'))
        NOT VALID,
    ADD CONSTRAINT step_error_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout', 'permanent',
        'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'cancelled', 'bad_input', 'item_failed',
        'awaited_run_failed')) NOT VALID,
    ADD CONSTRAINT step_only_waits_wait CHECK (
        state <> 'waiting' OR kind IN ('wait', 'child', 'sleep', 'map', 'event', 'await')) NOT VALID;
ALTER TABLE cyclone.cyclone_step_errors
    DROP CONSTRAINT step_errors_kind_valid,
    ADD CONSTRAINT step_errors_kind_valid CHECK (error_kind IN ('error', 'panic', 'timeout', 'permanent',
        'reclaim_limit', 'deadline', 'max_wait', 'child_failed', 'bad_input', 'item_failed',
        'awaited_run_failed')) NOT VALID;
ALTER TABLE cyclone.cyclone_audit
    ADD COLUMN detail jsonb,
    DROP CONSTRAINT audit_action_valid,
    ADD CONSTRAINT audit_action_valid CHECK (action IN ('retry', 'cancel', 'pause', 'resume', 'rerun', 'signal'))
        NOT VALID;

COMMIT;

BEGIN;
SET LOCAL lock_timeout = '5s';

ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_kind_valid;
ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_error_kind_valid;
ALTER TABLE cyclone.cyclone_steps VALIDATE CONSTRAINT step_only_waits_wait;
ALTER TABLE cyclone.cyclone_step_errors VALIDATE CONSTRAINT step_errors_kind_valid;
ALTER TABLE cyclone.cyclone_audit VALIDATE CONSTRAINT audit_action_valid;

COMMIT;

-- Outside a transaction (CONCURRENTLY cannot run in one): each index is built while claims and reports go
-- on. IF NOT EXISTS: a deploy run again after one that stopped here does not trip over those already built.
CREATE INDEX CONCURRENTLY IF NOT EXISTS cyclone_runs_debounce ON cyclone.cyclone_runs (workflow, debounce_key, created_at)
    WHERE debounce_key IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS cyclone_steps_waiting_event ON cyclone.cyclone_steps (event_key)
    WHERE state = 'waiting' AND event_key IS NOT NULL;
CREATE INDEX CONCURRENTLY IF NOT EXISTS cyclone_steps_awaiting ON cyclone.cyclone_steps (awaited_run_id)
    WHERE state = 'waiting' AND awaited_run_id IS NOT NULL;
