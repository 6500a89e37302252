-- Verify cyclone:fail
BEGIN;
SELECT 'cyclone.backoff(int)'::regprocedure,
       'cyclone.fail(bigint, text, bigint, text, text, interval, text)'::regprocedure;
SELECT failed_span FROM cyclone.cyclone_steps WHERE false;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.fail(bigint, text, bigint, text, text, interval, text)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_worker', 'cyclone.backoff(int)', 'execute')::int;
SELECT 1 / has_function_privilege('cyclone_admin', 'cyclone.fail(bigint, text, bigint, text, text, interval, text)', 'execute')::int;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone.fail(bigint, text, bigint, text, text, interval, text)', 'execute'))::int;
SELECT 1 / (SELECT count(*) = 1 FROM pg_proc WHERE proname = 'fail' AND pronamespace = 'cyclone'::regnamespace)::int;
-- The engine's statements read the live table only (history.sql).
SELECT 1 / (pg_get_functiondef('cyclone._fail_step(bigint, text, text, interval)'::regprocedure) ~ 'ONLY cyclone(\.cyclone)?_(runs|steps)')::int;
-- The error is stored cut past 65,536 characters (issue 30).
SELECT 1 / (pg_get_functiondef('cyclone.fail(bigint, text, bigint, text, text, interval, text)'::regprocedure)
            ~ '_clipped\(p_error\)')::int;
SELECT 1 / (pg_get_functiondef('cyclone.fail(bigint, text, bigint, text, text, interval, text)'::regprocedure)
            ~ '_deadline_problem\(p_retry_in\)')::int;
-- Issue 35 (SPEC 18): a report after the step's timeout is refused.
SELECT 1 / (pg_get_functiondef('cyclone.fail(bigint, text, bigint, text, text, interval, text)'::regprocedure)
            ~ 'started_at \+ least\(timeout')::int;
ROLLBACK;
