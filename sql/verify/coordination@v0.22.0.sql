-- Verify cyclone:coordination
BEGIN;
SELECT 'cyclone.emit_event(text,jsonb)'::regprocedure;
SELECT 'cyclone.signal_with_start(text,text,text,jsonb,jsonb)'::regprocedure;
SELECT 'cyclone.rerun(uuid,text,text)'::regprocedure;
SELECT 'cyclone._notify_awaiters(uuid[])'::regprocedure;
SELECT 1 / (cyclone._event_key('payment:{input.id}', '{"input": {"id": 7}}') = 'payment:7')::int;
ROLLBACK;
