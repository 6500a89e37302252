-- Revert cyclone:overview
BEGIN;

DROP FUNCTION IF EXISTS cyclone.finished_runs(timestamp with time zone, timestamp with time zone, text, text, integer, timestamp with time zone, uuid);
DROP FUNCTION IF EXISTS cyclone.finished_per_minute(timestamp with time zone, timestamp with time zone);
DROP FUNCTION IF EXISTS cyclone._finished_sources(timestamp with time zone, timestamp with time zone);
DROP FUNCTION IF EXISTS cyclone.overview_gauges(integer);

COMMIT;
