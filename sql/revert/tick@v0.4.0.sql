-- Revert cyclone:tick
BEGIN;
DROP FUNCTION cyclone.unschedule_tick();
DROP FUNCTION cyclone.schedule_tick(text, int);
DROP FUNCTION cyclone.tick(int);
COMMIT;
