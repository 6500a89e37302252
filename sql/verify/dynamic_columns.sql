-- Verify cyclone:dynamic_columns
BEGIN;
SELECT priority FROM cyclone.cyclone_runs WHERE false;
SELECT snoozes, progress, progress_at FROM cyclone.cyclone_steps WHERE false;
ROLLBACK;
