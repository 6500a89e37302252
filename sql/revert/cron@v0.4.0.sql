-- Revert cyclone:cron
BEGIN;

DROP FUNCTION cyclone.next_fire(text, timestamptz, text);
DROP FUNCTION cyclone._cron_timezone_known(text);
DROP FUNCTION cyclone._cron_instant(timestamp, text);
DROP FUNCTION cyclone._cron_next_wall(int[], int[], int[], int[], int[], boolean, boolean, timestamp);
DROP FUNCTION cyclone._cron_parse(text);
DROP FUNCTION cyclone._cron_value(text, text, text, int, int, text[], int);
DROP FUNCTION cyclone._cron_field(text, text, int, int, text[], int);

COMMIT;
