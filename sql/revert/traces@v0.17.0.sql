-- Revert cyclone:traces
BEGIN;
ALTER TABLE cyclone.cyclone_runs DROP COLUMN traceparent;
DROP FUNCTION cyclone._traceparent_problem(text);
COMMIT;
