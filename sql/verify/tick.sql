-- Verify cyclone:tick
BEGIN;
SELECT 'cyclone.tick(int)'::regprocedure, 'cyclone.schedule_tick(text, int)'::regprocedure,
       'cyclone.unschedule_tick()'::regprocedure;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.tick(int)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.schedule_tick(text, int)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('cyclone_worker', 'cyclone.schedule_tick(text, int)', 'execute'))::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.tick(int)', 'execute'))::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone.tick(int)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- SPEC 18: rows of workers unseen for a day go.
SELECT 1 / (pg_get_functiondef('cyclone.tick(int)'::regprocedure) ~ '_forget_workers')::int;
-- Issue 37: tick keeps where claims start their walk of queue 0.
SELECT 1 / (pg_get_functiondef('cyclone.tick(integer)'::regprocedure) ~ '_refresh_claim_floor')::int;
ROLLBACK;
