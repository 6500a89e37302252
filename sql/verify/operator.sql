-- Verify cyclone:operator
BEGIN;
SELECT 'cyclone.retry(uuid, text, int, text)'::regprocedure, 'cyclone.retry_all(uuid, text)'::regprocedure,
       'cyclone.cancel(uuid, text)'::regprocedure, 'cyclone.pause(uuid)'::regprocedure,
       'cyclone.resume(uuid)'::regprocedure;
ROLLBACK;
