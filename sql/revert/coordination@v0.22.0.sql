-- Revert cyclone:coordination
-- The functions of 46_coordination.sql. The changes reworked after it in the plan (whose reverts run first)
-- no longer call them once reverted.
BEGIN;

DROP FUNCTION IF EXISTS cyclone.rerun(uuid,text,text);
DROP FUNCTION IF EXISTS cyclone.signal_with_start(text,text,text,jsonb,jsonb);
DROP FUNCTION IF EXISTS cyclone._debounce(text,text,jsonb,interval,interval);
DROP FUNCTION IF EXISTS cyclone.emit_event(text,jsonb);
DROP FUNCTION IF EXISTS cyclone._notify_awaiters(uuid[]);
DROP FUNCTION IF EXISTS cyclone._reach_await(bigint,jsonb);
DROP FUNCTION IF EXISTS cyclone._reach_event(bigint,jsonb);
DROP FUNCTION IF EXISTS cyclone._event_lock(text);
DROP FUNCTION IF EXISTS cyclone._event_key(text,jsonb);

COMMIT;
