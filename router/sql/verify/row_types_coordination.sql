-- Verify cyclone_router:row_types_coordination
BEGIN;
SELECT (NULL::cyclone.run_row).rerun_of, (NULL::cyclone.step_row).event_key, (NULL::cyclone.step_row).awaited_run_id,
       (NULL::cyclone.step_row).spec;
ROLLBACK;
