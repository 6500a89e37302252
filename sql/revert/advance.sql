-- Revert cyclone:advance
BEGIN;
DROP FUNCTION cyclone._create_run(text, jsonb, interval, text, timestamptz, uuid, bigint);
DROP FUNCTION cyclone._insert_steps(uuid[], jsonb[], jsonb, timestamptz);
DROP FUNCTION cyclone._notify_parent(uuid);
DROP FUNCTION cyclone._advance_runs(uuid[]);
DROP FUNCTION cyclone._finish_if_done(uuid);
DROP FUNCTION cyclone._finish_runs(uuid[]);
DROP FUNCTION cyclone._advance(uuid);
DROP FUNCTION cyclone._on_discard(cyclone.cyclone_steps);
DROP FUNCTION cyclone._discard_step(bigint, text, text);
DROP FUNCTION cyclone._fail_run(uuid, text);
DROP FUNCTION cyclone._cancel_run(uuid, text);
DROP FUNCTION cyclone._end_run(uuid, text, text);
DROP FUNCTION cyclone._cancel_steps(uuid, bigint[], text);
DROP FUNCTION cyclone._root_run(uuid);
DROP FUNCTION cyclone._lock_run(uuid);
COMMIT;
