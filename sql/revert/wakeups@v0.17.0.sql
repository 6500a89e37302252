-- Revert cyclone:wakeups
BEGIN;

DROP FUNCTION cyclone._wake();
DROP FUNCTION cyclone._claimed(text, int, int, interval, timestamptz);
DROP TABLE cyclone.cyclone_waiting_workers;

COMMIT;
