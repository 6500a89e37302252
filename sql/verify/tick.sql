-- Verify cyclone:tick
BEGIN;
SELECT 'cyclone.tick(int)'::regprocedure, 'cyclone.schedule_tick(text, int)'::regprocedure,
       'cyclone.unschedule_tick()'::regprocedure;
ROLLBACK;
