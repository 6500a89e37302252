-- Revert cyclone:clock
BEGIN;
DROP FUNCTION cyclone.reset_time();
DROP FUNCTION cyclone.advance_time(interval);
DROP FUNCTION cyclone.now();
DROP TABLE cyclone.clock;
COMMIT;
