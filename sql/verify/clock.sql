-- Verify cyclone:clock
BEGIN;
SELECT singleton, time_offset FROM cyclone.clock WHERE FALSE;
SELECT 'cyclone.now()'::regprocedure, 'cyclone.advance_time(interval)'::regprocedure,
       'cyclone.reset_time()'::regprocedure;
ROLLBACK;
