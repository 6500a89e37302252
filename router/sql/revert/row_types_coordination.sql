-- Revert cyclone_router:row_types_coordination
BEGIN;

ALTER TYPE cyclone.step_row DROP ATTRIBUTE spec, DROP ATTRIBUTE awaited_run_id, DROP ATTRIBUTE event_key;
ALTER TYPE cyclone.run_row DROP ATTRIBUTE rerun_of;

COMMIT;
