-- Revert cyclone:advance
BEGIN;
DROP FUNCTION cyclone._notify_parent(uuid);
DROP FUNCTION cyclone._advance_runs(uuid[]);
DROP FUNCTION cyclone._finish_runs(uuid[]);
DROP FUNCTION cyclone._advance(uuid);
DROP FUNCTION cyclone._on_discard(cyclone.cyclone_steps);
DROP FUNCTION cyclone._discard_step(bigint, text, text);
DROP FUNCTION cyclone._end_run_and_notify(uuid, text, text);
DROP FUNCTION cyclone._start_runs(text, jsonb[], interval, text, timestamptz, uuid, bigint);
COMMIT;
