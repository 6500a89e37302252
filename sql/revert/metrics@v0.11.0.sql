-- Revert cyclone:metrics
BEGIN;

DROP FUNCTION cyclone.metrics();
DROP INDEX cyclone.cyclone_steps_dead_letters;
DROP INDEX cyclone.cyclone_steps_pending;
DROP INDEX cyclone.cyclone_runs_live;

COMMIT;
