-- Verify cyclone:wakeups
BEGIN;
SELECT worker, until FROM cyclone.cyclone_waiting_workers WHERE false;
SELECT 'cyclone._wake()'::regprocedure,
       'cyclone._claimed(text, int, int, interval, timestamptz)'::regprocedure;
SELECT 1 / (NOT has_function_privilege('public', 'cyclone._wake()', 'execute'))::int;
ROLLBACK;
