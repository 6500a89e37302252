-- Revert cyclone_router:row_types_dynamic
BEGIN;

ALTER TYPE cyclone.step_row DROP ATTRIBUTE item, DROP ATTRIBUTE item_index, DROP ATTRIBUTE progress_at, DROP ATTRIBUTE progress, DROP ATTRIBUTE snoozes;
ALTER TYPE cyclone.run_row DROP ATTRIBUTE priority;

COMMIT;
