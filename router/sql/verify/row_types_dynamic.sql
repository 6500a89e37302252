-- Verify cyclone_router:row_types_dynamic
BEGIN;
SELECT (NULL::cyclone.run_row).priority, (NULL::cyclone.step_row).snoozes, (NULL::cyclone.step_row).progress,
       (NULL::cyclone.step_row).progress_at, (NULL::cyclone.step_row).item_index, (NULL::cyclone.step_row).item;
ROLLBACK;
