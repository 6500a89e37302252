-- Revert cyclone:runs
BEGIN;
DROP FUNCTION cyclone._end_run(uuid, text, text);
DROP FUNCTION cyclone._cancel_steps(uuid, bigint[], text);
DROP FUNCTION cyclone._discard_steps(bigint[], text, text);
DROP FUNCTION cyclone._create_runs(text, jsonb, jsonb[], interval, text, timestamptz, uuid, bigint);
DROP FUNCTION cyclone._insert_steps(uuid[], jsonb[], jsonb, timestamptz);
DROP FUNCTION cyclone._root_run(uuid);
DROP FUNCTION cyclone._ancestors(uuid);
DROP FUNCTION cyclone._lock_existing_run(text, uuid);
DROP FUNCTION cyclone._lock_run(uuid);
COMMIT;
